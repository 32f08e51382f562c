package kernel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// refusedWithin is how long a test waits for the provider to close a
// connection beyond its limit: it tells the consumer why and closes the
// connection once it has read the consumer's first frame (a few ms on
// loopback), or refusalWait (500 ms) after the accept when the consumer
// sends nothing; the bound is generous for a loaded machine and still far
// below heartbeat.timeout, how long a silent connection is otherwise kept.
const refusedWithin = 3 * time.Second

// exportLimited exports demo.Echo on a free loopback port with the query
// given, logging to log (nil: quiet); it returns the node, the exporter
// and the exchange server on its address.
func exportLimited(t *testing.T, query string, log *slog.Logger) (*Node, *Exporter, *exchange.Server) {
	t.Helper()
	if log == nil {
		log = quiet
	}
	n := NewNode(testCatalogs(t), WithLogger(log), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+query))
	if err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range n.servers {
		if s.port == e.URL().Port() {
			return n, e, s.srv
		}
	}
	t.Fatalf("no server on %s", e.URL().Address())
	return nil, nil, nil
}

// rawChannel dials addr with transport name and runs a consumer exchange
// channel on the session (no kernel connection manager: no reconnect, no
// heartbeat); it is closed at the end of the test.
func rawChannel(t *testing.T, transport, addr string) *exchange.Channel {
	t.Helper()
	cat := testCatalogs(t)
	u := spi.MustParse("airnode://" + addr + "/demo.Echo?transport=" + transport)
	trb, _, err := cat.Transport.Select(u, "")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trb.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := tr.Dial(ctxT(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	ch := exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: cat.CodecByID, Logger: quiet})
	t.Cleanup(func() { ch.Close("test over"); ch.Wait() })
	return ch
}

// pingRefused dials addr with transport name as rawChannel does and
// pings: the provider, at its connection limit, must tell the consumer
// why and close the connection once it has read that first frame, so the
// ping fails within refusedWithin with the provider's reason, which must
// contain limit (such as "its limit (accepts=5)").
func pingRefused(t *testing.T, transport, addr, limit, what string) {
	t.Helper()
	ch := rawChannel(t, transport, addr)
	ctx, cancel := context.WithTimeout(context.Background(), refusedWithin)
	defer cancel()
	start := time.Now()
	err := ch.Ping(ctx)
	switch {
	case err == nil:
		t.Fatalf("%s: the provider answered its ping; want the connection refused", what)
	case ctx.Err() != nil:
		t.Fatalf("%s: the connection was kept %v with its ping unanswered (%v); want it refused and closed at its first frame", what, refusedWithin, err)
	case !strings.Contains(err.Error(), exchange.RefusedReason) || !strings.Contains(err.Error(), limit):
		t.Fatalf("%s: ping: %v; want the provider's reason %q naming %q", what, err, exchange.RefusedReason, limit)
	}
	t.Logf("%s: refused after %v: %v", what, time.Since(start).Round(time.Microsecond), err)
}

// pingOK pings ch and fails the test unless the provider answers.
func pingOK(t *testing.T, ch *exchange.Channel, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.Ping(ctx); err != nil {
		t.Fatalf("%s: ping: %v", what, err)
	}
}

// readClosed reads c until wait has passed and reports whether it ended
// (EOF, reset) rather than timing out.
func readClosed(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// accepts=5, on both transports: five consumer connections are served,
// the sixth is refused (told why, closed at its first frame, counted and
// logged naming the key) while the five stay usable, and once one of
// them closes a new one is served. The refused connections ping, so the
// provider closes them at their ping, not refusalWait after the accept.
func TestAcceptsClosesConnectionsBeyondTheLimit(t *testing.T) {
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			var log logbuf.Buffer
			_, e, srv := exportLimited(t, "transport="+tr+"&accepts=5", slog.New(slog.NewTextHandler(&log, nil)))
			addr := e.URL().Address()
			chans := make([]*exchange.Channel, 5)
			for i := range chans {
				chans[i] = rawChannel(t, tr, addr)
				pingOK(t, chans[i], fmt.Sprintf("connection %d of 5", i+1))
			}
			if n := srv.Connections(); n != 5 {
				t.Fatalf("server serves %d connections, want 5", n)
			}
			pingRefused(t, tr, addr, "its limit (accepts=5)", "the 6th connection")
			for i, ch := range chans {
				pingOK(t, ch, fmt.Sprintf("connection %d after the 6th was refused", i+1))
			}
			if got := srv.Refused(); got != 1 {
				t.Errorf("Refused() = %d, want 1", got)
			}
			eventually(t, "the refusal logged", func() bool { return strings.Contains(log.String(), "refused=1") })
			if s := log.String(); !strings.Contains(s, "connection refused: the provider already serves 5 connections, its limit (URL key accepts=5); closed at once") ||
				!strings.Contains(s, "key=accepts") || !strings.Contains(s, "refused=1") {
				t.Errorf("log %q; want the refusal naming the limit and the key", s)
			}

			// One of the five closes: a new connection is served once its
			// channel on the provider has finished.
			chans[0].Close("test: make room")
			chans[0].Wait()
			if !waitFor(5*time.Second, func() bool { return srv.Connections() == 4 }) {
				t.Fatalf("the server still serves %d connections 5s after one closed, want 4", srv.Connections())
			}
			ch := rawChannel(t, tr, addr)
			pingOK(t, ch, "a new connection after one of the five closed")
			pingRefused(t, tr, addr, "its limit (accepts=5)", "a 6th connection while five are served again")
		})
	}
}

// The refusal log is rate-bounded: refusals 1, 2, 4, 8 of 10 are logged,
// each with the count so far, and every one is counted. The ten
// connections are made at once: a refused connection that sends nothing
// is held refusalWait (500 ms) for its first frame, ten of them (within
// maxTelling) side by side, not one after another.
func TestAcceptsRefusalLogIsRateBounded(t *testing.T) {
	var log logbuf.Buffer
	_, e, srv := exportLimited(t, "transport=tcp&accepts=1", slog.New(slog.NewTextHandler(&log, nil)))
	addr := e.URL().Address()
	pingOK(t, rawChannel(t, "tcp", addr), "the one connection")
	conns := make([]net.Conn, 10)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			if !readClosed(c, refusedWithin) {
				t.Errorf("connection %d beyond accepts=1 was kept", i+1)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if got := srv.Refused(); got != 10 {
		t.Errorf("Refused() = %d, want 10", got)
	}
	s := log.String()
	if n := strings.Count(s, "connection refused"); n != 4 {
		t.Errorf("%d refusal lines for 10 refusals, want 4 (refusals 1, 2, 4, 8):\n%s", n, s)
	}
	for _, want := range []string{"refused=1\n", "refused=2\n", "refused=4\n", "refused=8\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("log lacks %q:\n%s", want, s)
		}
	}
}

// A real consumer (Refer) beyond accepts: its call fails at once, before
// connect.timeout, with a message naming the provider's connection limit
// and its URL key; the consumer within the limit is unaffected.
func TestAcceptsReferBeyondTheLimitNamesTheLimit(t *testing.T) {
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			_, e, _ := exportLimited(t, "transport="+tr+"&accepts=1", nil)
			u := "airnode://" + e.URL().Address() + "/demo.Echo?cluster=failfast&connect.timeout=5s&timeout=8s&transport=" + tr
			a := refer(t, consumer(t), u)
			if _, err := a.Invoke(ctxT(t), "Echo", 1); err != nil {
				t.Fatalf("first consumer: %v", err)
			}
			b := refer(t, consumer(t), u)
			start := time.Now()
			_, err := b.Invoke(ctxT(t), "Echo", 1)
			if err == nil {
				t.Fatal("a consumer beyond accepts=1 was served")
			}
			msg := err.Error()
			if !strings.Contains(msg, "the provider refused the connection: it already serves 1 connection, its limit (accepts=1)") {
				t.Fatalf("error %q; want it to name the provider's connection limit (accepts=1)", msg)
			}
			if took := time.Since(start); took >= 5*time.Second {
				t.Errorf("the refused consumer failed after %v, want before connect.timeout 5s", took)
			}
			t.Log(msg)
			if _, err := a.Invoke(ctxT(t), "Echo", 2); err != nil {
				t.Errorf("first consumer after the refusal: %v", err)
			}
		})
	}
}

// accepts.per.ip=2: a third connection from 127.0.0.1 is refused (told
// why at its first frame, then closed), logged naming accepts.per.ip,
// while one from 127.0.0.2 is served.
func TestAcceptsPerIP(t *testing.T) {
	var log logbuf.Buffer
	_, e, srv := exportLimited(t, "transport=tcp&accepts.per.ip=2", slog.New(slog.NewTextHandler(&log, nil)))
	addr := e.URL().Address()
	pingOK(t, rawChannel(t, "tcp", addr), "first from 127.0.0.1")
	pingOK(t, rawChannel(t, "tcp", addr), "second from 127.0.0.1")
	pingRefused(t, "tcp", addr, "its limit per peer IP (accepts.per.ip=2)", "a third connection from 127.0.0.1")
	// the refusal is logged just after the connection is closed: the
	// consumer may see the close first
	const refusal = "connections from 127.0.0.1, its limit per peer IP (URL key accepts.per.ip=2)"
	eventually(t, "the refusal logged naming the peer IP and accepts.per.ip", func() bool { return strings.Contains(log.String(), refusal) })
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	defer c.Close()
	// it sends nothing: refused, it would be held refusalWait before its
	// close, so the server's counts tell whether it is served
	if !waitFor(refusedWithin, func() bool { return srv.Connections() == 3 }) {
		t.Fatalf("server serves %d connections %v after one from 127.0.0.2 (refused: %d), want 3", srv.Connections(), refusedWithin, srv.Refused())
	}
	if got := srv.Refused(); got != 1 {
		t.Errorf("Refused() = %d after the connection from 127.0.0.2, want 1 (the third from 127.0.0.1)", got)
	}
}

// The keys' values: the default is the open-file limit minus
// max(64, 10 %); an explicit value above the limit is taken with a
// warning; a bad value is an error naming key and value.
func TestAcceptsKeyValues(t *testing.T) {
	limit := func(n uint64, ok bool) func() (uint64, bool) { return func() (uint64, bool) { return n, ok } }
	for _, c := range []struct {
		query       string
		fd          uint64
		known       bool
		max, perIP  int
		warn, error string
	}{
		{"", 1024, true, 922, 0, "", ""},
		{"accepts=0", 20000, true, 18000, 0, "", ""},
		{"", 256, true, 192, 0, "", ""},
		{"", 100, true, 50, 0, "", ""},
		{"", 0, false, 0, 0, "", ""},
		{"accepts=5&accepts.per.ip=2", 1024, true, 5, 2, "", ""},
		{"accepts=30000", 20000, true, 30000, 0, "accepts=30000 is above the process's open-file limit 20000", ""},
		{"accepts=-1", 1024, true, 0, 0, "", `invalid value "-1" for URL key "accepts"`},
		{"accepts=lots", 1024, true, 0, 0, "", `"lots" for URL key "accepts"`},
		{"accepts.per.ip=99999999999", 1024, true, 0, 0, "", `"99999999999" for URL key "accepts.per.ip"`},
	} {
		l, warn, err := acceptsLimit(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?"+c.query), limit(c.fd, c.known))
		if c.error != "" {
			if err == nil || !strings.Contains(err.Error(), c.error) {
				t.Errorf("%q: err %v, want %q", c.query, err, c.error)
			}
			continue
		}
		if err != nil || l.Max != c.max || l.PerIP != c.perIP || !strings.Contains(warn, c.warn) || (c.warn == "") != (warn == "") {
			t.Errorf("%q with limit %d: %+v, warn %q, err %v; want max %d, per IP %d, warn %q", c.query, c.fd, l, warn, err, c.max, c.perIP, c.warn)
		}
	}
}

// Export refuses a bad accepts, naming key and value, before it listens.
func TestAcceptsExportRejectsBadValues(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for _, q := range []string{"accepts=-3", "accepts=x", "accepts.per.ip=-1"} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		k, v, _ := strings.Cut(q, "=")
		if err == nil || !strings.Contains(err.Error(), `"`+v+`"`) || !strings.Contains(err.Error(), `"`+k+`"`) {
			t.Errorf("Export with %s: %v; want an error naming key and value", q, err)
		}
	}
}

// acceptsChildEnv makes the test binary run acceptsChild instead of a test.
const acceptsChildEnv = "AIRNODE_TEST_ACCEPTS_CHILD"

// With no accepts key the provider's limit comes from RLIMIT_NOFILE: a
// provider process whose soft limit is 256 serves 256 - 64 = 192
// connections less the descriptors it had open at listen (tester22
// finding 4), and refuses the next ones, logging accepts=N. Each of the
// 200 connections made first pings once all are made: those served answer,
// those refused are closed (told why or, beyond the 16 told at once, unread).
func TestAcceptsDefaultFromOpenFileLimit(t *testing.T) {
	if os.Getenv(acceptsChildEnv) != "" {
		acceptsChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptsDefaultFromOpenFileLimit$")
	cmd.Env = append(os.Environ(), acceptsChildEnv+"=1", testbin.NoExitSleep())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr logbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close() // the child closes its node and exits
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill() // by PID: the child this test started
				<-done
			}
		})
	}
	defer stop()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrc <- a
			}
		}
		close(addrc)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(20 * time.Second):
	}
	if addr == "" {
		stop()
		t.Fatalf("the child provider did not start; its stderr:\n%s", stderr.String())
	}
	const dialed = 200
	// the default is 256 - 64 less the descriptors open at listen
	// (tester22 finding 4), which the child's listening line gives
	listening := regexp.MustCompile(`msg=listening .* accepts=(\d+) fds_open=(\d+)`)
	m := listening.FindStringSubmatch(stderr.String())
	for end := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(end); m = listening.FindStringSubmatch(stderr.String()) {
		time.Sleep(10 * time.Millisecond) // the line is written before ADDR, on another pipe
	}
	if m == nil {
		t.Fatalf("no listening line with accepts and fds_open in the child's log:\n%s", stderr.String())
	}
	want, _ := strconv.Atoi(m[1])
	if open, _ := strconv.Atoi(m[2]); want != 192-open {
		t.Fatalf("the child listens with accepts=%d, fds_open=%d; want accepts = 192 - fds_open", want, open)
	}
	cat := testCatalogs(t)
	trb, _, err := cat.Transport.Select(spi.MustParse("airnode://"+addr+"/demo.Echo?transport=tcp"), "")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trb.Build(spi.MustParse("airnode://" + addr + "/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	chans := make([]*exchange.Channel, 0, dialed)
	closeChans := func() {
		for _, ch := range chans {
			ch.Close("test over")
		}
		for _, ch := range chans {
			ch.Wait()
		}
		chans = nil
	}
	defer closeChans()
	for range dialed {
		sess, err := tr.Dial(ctxT(t), addr)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: cat.CodecByID, Logger: quiet}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered int
	)
	for _, ch := range chans {
		wg.Go(func() {
			if ch.Ping(ctx) == nil {
				mu.Lock()
				answered++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("pings unanswered and connections not closed after 20s (%d answered)", answered)
	}
	if answered != want {
		t.Errorf("the provider with RLIMIT_NOFILE 256 served %d of %d connections, want %d (256 - 64 - descriptors open at listen)", answered, dialed, want)
	}
	closeChans() // before the child closes its node, which would wait for them
	stop()
	if s := stderr.String(); !strings.Contains(s, fmt.Sprintf("accepts=%d", want)) || !strings.Contains(s, "connection refused") {
		t.Errorf("the child's log lacks the refusal naming accepts=%d:\n%s", want, s)
	}
}

// acceptsChild lowers the process's RLIMIT_NOFILE soft limit to 256,
// exports demo.Echo over tcp without an accepts key, prints "ADDR host:port"
// and serves until stdin ends.
func acceptsChild(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if n, _ := netaccept.OpenFileLimit(); n != 256 {
		t.Fatalf("OpenFileLimit() = %d after setrlimit 256", n)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n := NewNode(testCatalogs(t), WithLogger(log), WithShutdownWait(0))
	defer n.Close()
	e, err := n.Export(context.Background(), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ADDR %s\n", e.URL().Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

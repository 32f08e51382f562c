package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/spi"
)

// t22ChildEnv makes the test binary run the child half of a tester22
// test instead of the test: its value says which and with what.
const t22ChildEnv = "AIRNODE_TEST_T22_CHILD"

// runT22Child runs test name of this binary in a child process with
// t22ChildEnv=value and returns its exit error and combined output,
// killing it (by PID) after 60 s.
func runT22Child(t *testing.T, name, value string) (error, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), t22ChildEnv+"="+value, testbin.NoExitSleep())
	out, err := cmd.CombinedOutput()
	return err, string(out)
}

// Tester22 finding 3: a consumer out of file descriptors logged its
// failed dials only at Debug. Now the child, its RLIMIT_NOFILE full,
// logs at Warn "this process is out of file descriptors: see ulimit -n"
// with the limit, counts the attempts (airnode_consumer_connect_failures
// _total{reason="fds"}) and its reference says the connection is down
// for a local reason (LocalConnectFailures).
func TestT22_ConsumerOutOfFDsWarns(t *testing.T) {
	if v := os.Getenv(t22ChildEnv); v != "" {
		if addr, ok := strings.CutPrefix(v, "fds "); ok {
			outOfFDsChild(t, addr)
		}
		return
	}
	_, e := provider(t)
	err, out := runT22Child(t, "TestT22_ConsumerOutOfFDsWarns", "fds "+e.URL().Address())
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`level=WARN msg="cannot connect to provider: this process is out of file descriptors: see ulimit -n" component=kernel provider=` +
		regexp.QuoteMeta(e.URL().Address()) + ` .*too many open files.* open_file_limit=\d+`)
	if !want.MatchString(out) {
		t.Errorf("the child's log lacks the Warn naming ulimit -n (want %s):\n%s", want, out)
	}
}

// outOfFDsChild takes every descriptor the process may open (the soft
// RLIMIT_NOFILE lowered to its highest open descriptor, the holes below
// filled), refers to addr and waits for the Warn; then it gives the
// descriptors back and checks the counter and LocalConnectFailures.
func outOfFDsChild(t *testing.T, addr string) {
	var log logbuf.Buffer
	lg := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	defer func() { fmt.Fprint(os.Stderr, log.String()) }()
	// the runtime's poller and the node's extensions open what they need
	// before the limit
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
	}
	n := NewNode(testCatalogs(t), WithLogger(lg), WithShutdownWait(0))
	defer n.Close()
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	highest := 0
	for _, d := range ents {
		if fd, err := strconv.Atoi(d.Name()); err == nil {
			highest = max(highest, fd)
		}
	}
	rl := saved
	rl.Cur = uint64(highest + 1)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	var fill []*os.File
	restore := func() {
		for _, f := range fill {
			f.Close()
		}
		fill = nil
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved)
	}
	defer restore()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("filling the descriptor table: %v", err)
			}
			break
		}
		fill = append(fill, f)
	}
	before := counters.Transport.ConnectFDs.Load()
	ref, err := n.Refer(context.Background(), spi.MustParse("airnode://"+addr+"/demo.Echo"), spi.URL{})
	if err != nil {
		restore()
		t.Fatalf("Refer: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "out of file descriptors: see ulimit -n") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	down, example := ref.LocalConnectFailures()
	failed := counters.Transport.ConnectFDs.Load() - before
	restore()
	if !strings.Contains(log.String(), "out of file descriptors: see ulimit -n") {
		t.Fatalf("no Warn naming ulimit -n within 10 s")
	}
	if failed == 0 {
		t.Errorf("counters.Transport.ConnectFDs did not grow")
	}
	if down != 1 || example == nil || !strings.Contains(example.Error(), "too many open files") {
		t.Errorf("LocalConnectFailures() = %d, %v; want 1 naming too many open files", down, example)
	}
	// given its descriptors back, the consumer connects on its backoff
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ref.Invoke(ctx, "Echo", "hi"); err != nil {
		t.Errorf("call after the descriptors came back: %v", err)
	}
	if down, _ := ref.LocalConnectFailures(); down != 0 {
		t.Errorf("LocalConnectFailures() = %d once connected, want 0", down)
	}
}

// Local connect failures are rate-bounded per logger and reason: 300
// connections failing 6 times each make 11 lines (1, 2, 4 ... 1024),
// not 1,800; another reason, or another logger, has its own burst.
func TestT22_LocalFailureLinesBounded(t *testing.T) {
	lg := slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil))
	now := time.Now()
	lines := 0
	var last int64
	for i := range 1800 {
		if ok, suppressed, n := allowLocalLine(lg, "fds", now.Add(time.Duration(i)*time.Millisecond)); ok {
			lines++
			last = suppressed
			_ = n
		}
	}
	if lines != 11 || last != 511 {
		t.Errorf("1800 failures in 1.8 s: %d lines, the last leaving out %d; want 11, 511", lines, last)
	}
	if ok, _, _ := allowLocalLine(lg, "ports", now); !ok {
		t.Errorf("the first failure of another reason was left out")
	}
	if ok, _, n := allowLocalLine(lg, "fds", now.Add(20*time.Second)); !ok || n != 1 {
		t.Errorf("a failure after 10 s quiet: logged %v, burst %d; want a new burst", ok, n)
	}
	for _, c := range []struct {
		err    error
		reason string
	}{
		{dialError{fmt.Errorf("smux: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)})}, "fds"},
		{syscall.ENFILE, "fds"},
		{fmt.Errorf("tcp: %w", syscall.EADDRNOTAVAIL), "ports"},
		{syscall.ENOBUFS, "buffers"},
		{dialError{errors.New("plugin: dial: socket: too many open files")}, "fds"},
		{errors.New("connected but the provider answered the first ping with an error: too many open files"), ""},
		{syscall.ECONNREFUSED, ""},
		{context.DeadlineExceeded, ""},
	} {
		if got, _ := localDialCause(c.err); got != c.reason {
			t.Errorf("localDialCause(%v) = %q, want %q", c.err, got, c.reason)
		}
	}
}

// Tester22 finding 8: a provider restarted on its port was redialled
// only on the consumer's backoff, though its new registry entry had
// arrived. Here the backoff has reached 3.2-4.8 s (reconnect.backoff=2s,
// two redials failed) when the provider comes back with a new entry (a
// new timestamp; the old entry left in place, as after kill -9, then
// removed): the consumer is connected within 1.5 s, and says the
// registry entry asked.
func TestT22_NewEntryRedialsAtOnce(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("memory://t22-redial")
	// the provider: a node of its own, on no registry; its entries are
	// the test's to write, so that stopping it leaves its entry in place
	reg, p1, old := listedProvider(t, cat, regURL, "1000")
	addr := old.Address()
	var log logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithRegistry(regURL))
	defer c.Close()
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?reconnect.backoff=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	_ = p1.Close() // "kill -9": the entry stays
	// the first two redials (after 1.6-2.4 s each) fail: the next waits
	// 3.2-4.8 s
	second := regexp.MustCompile(`msg="cannot reconnect to provider" .*attempt=2 `)
	deadline := time.Now().Add(15 * time.Second)
	for !second.MatchString(log.String()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !second.MatchString(log.String()) {
		t.Fatalf("no second failed redial within 15 s:\n%s", log.String())
	}
	p2 := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p2.Close()
	e2, err := p2.Export(ctxT(t), demo.New("p2", 100), spi.MustParse("airnode://"+addr+"/demo.Echo"))
	if err != nil {
		t.Fatalf("restart on %s: %v", addr, err)
	}
	start := time.Now()
	if err := reg.Register(ctxT(t), e2.URL().With("timestamp", "2000")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(ctxT(t), old); err != nil { // the old session's expiry
		t.Fatal(err)
	}
	for time.Since(start) < 3*time.Second {
		if up, _ := ref.Connections(); up == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	if up, _ := ref.Connections(); up != 1 || took > 1500*time.Millisecond {
		t.Fatalf("connected again %v after the new entry (up %d); want within 1.5 s, the backoff being 3.2-4.8 s:\n%s", took, up, log.String())
	}
	if !strings.Contains(log.String(), "asked_by_registry_entry=true") {
		t.Errorf("the reconnect line does not say the registry entry asked:\n%s", log.String())
	}
	if _, err := ref.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Error(err)
	}
}

// A conn asks for at most one redial per second for new registry
// entries (a flapping registry makes no dial storm), and none while up
// or at its first attempt.
func TestT22_EntryRedialBounded(t *testing.T) {
	dials := make(chan struct{}, 100)
	dial := func(ctx context.Context, addr string) (channel, error) {
		dials <- struct{}{}
		return nil, syscall.ECONNREFUSED
	}
	c := newConn("127.0.0.1:1", dial, time.Second, 10*time.Second, quiet, nil)
	defer c.close()
	<-dials // the first attempt; the next is 8-12 s away
	for c.state.Load() == nil {
		time.Sleep(time.Millisecond)
	}
	asked := 0
	for range 20 {
		if c.redialForEntry() {
			asked++
		}
	}
	if asked != 1 {
		t.Errorf("20 entries at once asked for %d redials, want 1", asked)
	}
	select {
	case <-dials:
	case <-time.After(2 * time.Second):
		t.Fatal("no redial within 2 s of a new entry")
	}
	select {
	case <-dials:
		t.Error("a second redial without a new entry")
	case <-time.After(300 * time.Millisecond):
	}
}

// Tester22 finding 4: the accepts default ignored the descriptors open
// at listen. With N more open it is lower by N, down to its floor.
func TestT22_AcceptsDefaultLessOpenDescriptors(t *testing.T) {
	for _, c := range []struct {
		limit   uint64
		open    int
		want    int
		floored bool
	}{
		{256, -1, 192, false}, {256, 0, 192, false}, {256, 10, 182, false}, {256, 150, 42, false},
		{256, 160, 32, false}, {256, 170, 32, true}, {1024, 100, 822, false}, {40, 30, 20, true},
		{40, 9, 20, true}, {63, 40, 32, true}, {64, 40, 32, true}, {62, 40, 31, true}, {10, 5, 5, true},
	} {
		if got, floored := defaultAccepts(c.limit, c.open); got != c.want || floored != c.floored {
			t.Errorf("defaultAccepts(%d, %d) = %d, %v; want %d, %v", c.limit, c.open, got, floored, c.want, c.floored)
		}
	}
	// the README's floor (tester23 N4): 32, or half the limit (rounded
	// up) when the limit is under 64
	for limit := uint64(2); limit <= 300; limit++ {
		want := 32
		if limit < 64 {
			want = int(limit+1) / 2
		}
		if got, floored := defaultAccepts(limit, int(limit)); got != want || !floored {
			t.Errorf("defaultAccepts(%d, %d) = %d, %v; want the floor %d, true", limit, limit, got, floored, want)
		}
	}
	if _, ok := openDescriptors(); !ok {
		t.Skip("no /proc/self/fd")
	}
	pu := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	const extra = 40
	var diff, openBefore, openAfter int
	for range 5 { // other tests' goroutines may be closing descriptors meanwhile
		l0, _, o0, err := listenAccepts(pu)
		if err != nil {
			t.Fatal(err)
		}
		files := make([]*os.File, 0, extra)
		for range extra {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		l1, _, o1, err := listenAccepts(pu)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		diff, openBefore, openAfter = l0.Max-l1.Max, o0, o1
		if limit, known := netaccept.OpenFileLimit(); !known || netaccept.DefaultAccepts(limit)-o1 < minDefaultAccepts {
			t.Skipf("open-file limit %d too low for this test", limit)
		}
		if diff == extra && o1-o0 == extra {
			break
		}
	}
	if diff != extra {
		t.Errorf("with %d more descriptors open (fds_open %d -> %d) accepts fell by %d, want %d", extra, openBefore, openAfter, diff, extra)
	}
}

// In a process whose RLIMIT_NOFILE is 256 with 100 more descriptors open
// at listen, the "kernel: listening" line says accepts = 192 - fds_open
// and fds_open counts the 100.
func TestT22_AcceptsListeningLine(t *testing.T) {
	if v := os.Getenv(t22ChildEnv); v != "" {
		if v == "listen" {
			listeningChild(t)
		}
		return
	}
	err, out := runT22Child(t, "TestT22_AcceptsListeningLine", "listen")
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`msg=listening .* accepts=(\d+) fds_open=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no listening line with accepts and fds_open:\n%s", out)
	}
	accepts, _ := strconv.Atoi(m[1])
	open, _ := strconv.Atoi(m[2])
	if open < 100 || accepts != 192-open {
		t.Errorf("listening with RLIMIT_NOFILE 256: accepts=%d fds_open=%d; want fds_open >= 100 and accepts = 192 - fds_open", accepts, open)
	}
}

func listeningChild(t *testing.T) {
	if _, ok := openDescriptors(); !ok {
		t.Skip("no /proc/self/fd")
	}
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	rl := saved
	rl.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved) }()
	for range 100 { // registry entries, plugins, log files
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	lg := slog.New(slog.NewTextHandler(os.Stderr, nil))
	n := NewNode(testCatalogs(t), WithLogger(lg), WithShutdownWait(0))
	defer n.Close()
	if _, err := n.Export(context.Background(), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
}

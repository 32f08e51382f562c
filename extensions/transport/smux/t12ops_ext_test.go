package smux_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// t12ChildEnv names the transport the child provider of
// TestT12Ops3_AcceptOutOfFDs serves; set only in that child.
const t12ChildEnv = "AIRNODE_T12OPS_PROVIDER"

// TestT12Ops3_AcceptOutOfFDs (tester12 finding 3): a provider process out
// of file descriptors (RLIMIT_NOFILE a few above what it has open) logs
// the failed accept at Warn, "too many open files", and serves again once
// its consumers have closed their connections: a new consumer's stream is
// echoed and the log says "accepting connections again".
func TestT12Ops3_AcceptOutOfFDs(t *testing.T) {
	for _, name := range []string{smux.Name, tcp.Name} {
		t.Run(name, func(t *testing.T) { testAcceptOutOfFDs(t, name) })
	}
}

func testAcceptOutOfFDs(t *testing.T, name string) {
	tr := t12Transport(t, name)
	var log logbuf.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestT12Ops3Child$", "-test.v")
	cmd.Env = append(os.Environ(), t12ChildEnv+"="+name)
	cmd.Stderr = &log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatalf("child printed no address; its log:\n%s", log.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()

	// More consumers than the provider has descriptors for: those past the
	// limit wait in the listen queue (their dial succeeds).
	var sessions []spi.Session
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for range 12 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := tr.Dial(ctx, addr)
		cancel()
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		sessions = append(sessions, s)
	}
	waitLog(t, &log, "too many open files", 10*time.Second)
	text := log.String()
	if !strings.Contains(text, `level=WARN msg="accept failed; retrying (out of file descriptors? see ulimit -n)" component=transport transport=`+name+" ") {
		t.Fatalf("no Warn line for the failed accept:\n%s", text)
	}
	// While the consumers hold the descriptors, a new one is not served,
	// and the provider keeps retrying (a second line, 10 ms).
	if err := echoOnce(tr, addr, time.Second); err == nil {
		t.Fatalf("a new consumer was served while the provider was out of descriptors; its log:\n%s", log.String())
	}
	waitLog(t, &log, "retry_in=10ms", 10*time.Second)

	for _, s := range sessions {
		s.Close()
	}
	sessions = nil
	// Descriptors freed: a new consumer is served (within the 1 s backoff
	// plus the queued connections' closes).
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := echoOnce(tr, addr, 3*time.Second)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no echo from the provider 15s after the consumers closed: %v; its log:\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitLog(t, &log, "accepting connections again", 10*time.Second)
}

// echoOnce opens a session and a stream to addr, writes a line and reads
// it back, within d.
func echoOnce(tr spi.Transport, addr string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s, err := tr.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Open()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		if _, err := st.Write([]byte("ping\n")); err != nil {
			done <- err
			return
		}
		b := make([]byte, 5)
		_, err := io.ReadFull(st, b)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.Close()
		<-done
		return ctx.Err()
	}
}

func waitLog(t *testing.T, log *logbuf.Buffer, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("provider log lacks %q after %v:\n%s", want, d, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func t12Transport(t *testing.T, name string) spi.Transport {
	t.Helper()
	var b spi.TransportBuilder = smux.Builder{}
	if name == tcp.Name {
		b = tcp.Builder{}
	}
	tr, err := b.Build(spi.MustParse("airnode://127.0.0.1:0/x"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestT12Ops3Child is the provider process of TestT12Ops3_AcceptOutOfFDs:
// it listens, prints "LISTEN addr", lowers its RLIMIT_NOFILE to 3 above
// the descriptors it has open, and echoes every stream, closing each
// session when its consumer goes. It runs until killed; outside that test
// it does nothing.
func TestT12Ops3Child(t *testing.T) {
	name := os.Getenv(t12ChildEnv)
	if name == "" {
		t.Skip("the child process of TestT12Ops3_AcceptOutOfFDs")
	}
	tr := t12Transport(t, name)
	tr.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	lim := uint64(len(fds) + 3)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "child: RLIMIT_NOFILE %d (%d open)\n", lim, len(fds))
	fmt.Printf("LISTEN %s\n", l.Addr())
	for {
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer s.Close()
			st, err := s.Accept()
			if err != nil {
				return
			}
			_, _ = io.Copy(st, st)
		}()
	}
}

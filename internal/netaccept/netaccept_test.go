package netaccept

import (
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/logbuf"
)

// flaky fails n times with a temporary error, then accepts.
type flaky struct {
	net.Listener
	n int
}

type tempErr struct{}

func (tempErr) Error() string   { return "accept: too many open files" }
func (tempErr) Timeout() bool   { return false }
func (tempErr) Temporary() bool { return true }

func (f *flaky) Accept() (net.Conn, error) {
	if f.n > 0 {
		f.n--
		return nil, tempErr{}
	}
	return f.Listener.Accept()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestRetriesTemporaryErrors(t *testing.T) {
	l := listen(t)
	go func() {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
		}
	}()
	var buf logbuf.Buffer
	a := New(&flaky{Listener: l, n: 3}, "smux")
	a.UseLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	before := counters.Transport.AcceptErrors.Load()
	c, err := a.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	c.Close()
	if got := counters.Transport.AcceptErrors.Load() - before; got != 3 {
		t.Errorf("AcceptErrors grew by %d, want 3", got)
	}
	out := buf.String()
	for _, want := range []string{
		`level=WARN msg="accept failed; retrying (out of file descriptors? see ulimit -n)" component=transport transport=smux`, `err="accept: too many open files"`,
		"retry_in=5ms", "retry_in=10ms", "retry_in=20ms",
		`level=INFO msg="accepting connections again" component=transport transport=smux`, "failures=3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestLogIsRateLimited: a long burst logs one line per doubling of the
// backoff (5 ms .. 1 s: 9 lines), then one every LogInterval (10 s: the
// 19th failure, ten 1 s retries after the 9th, not the 10th one second
// after it, as the count "every 10 retries" made it: nu43 finding 6).
func TestLogIsRateLimited(t *testing.T) {
	var logged []int
	var backoff, maxLogged time.Duration
	now, lastLog := time.Unix(0, 0), time.Time{}
	for failures := 1; failures <= 30; failures++ {
		backoff = min(max(2*backoff, MinBackoff), MaxBackoff)
		if logDue(backoff, maxLogged, lastLog, now) {
			logged = append(logged, failures)
			maxLogged, lastLog = max(maxLogged, backoff), now
		}
		now = now.Add(backoff)
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 19, 29}; !slices.Equal(logged, want) {
		t.Fatalf("logged retries %v, want %v", logged, want)
	}
}

// scripted accepts by a script: 'F' fails with a temporary error, 'A'
// accepts from the real listener; past the script it accepts.
type scripted struct {
	net.Listener
	mu     sync.Mutex
	script string
}

func (s *scripted) Accept() (net.Conn, error) {
	s.mu.Lock()
	var step byte = 'A'
	if s.script != "" {
		step, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if step == 'F' {
		return nil, tempErr{}
	}
	return s.Listener.Accept()
}

// A listener flapping at its descriptor limit (accepting a connection,
// failing the next) stays in one burst: no Warn "failures=1" and Info
// pair per brief recovery (nu43 finding 6: three pairs in 12 ms). The
// first recovery is logged; those within LogInterval of it are counted
// into the burst's next line; a failure LogInterval after the burst's
// last begins a new burst.
func TestFlappingIsOneBurst(t *testing.T) {
	l := listen(t)
	dial := func(n int) {
		for range n {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
		}
	}
	var mu sync.Mutex
	clock := time.Unix(1000, 0)
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	var buf logbuf.Buffer
	sl := &scripted{Listener: l}
	a := New(sl, "tcp")
	defer a.Close()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	a.UseLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	accept := func(script string, accepts int) {
		t.Helper()
		sl.mu.Lock()
		sl.script = script
		sl.mu.Unlock()
		dial(accepts)
		for range accepts {
			c, err := a.Accept()
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			advance(time.Millisecond)
		}
	}
	accept("FFAFAFAA", 4) // two failures, then flapping: three pairs in a few ms
	out := buf.String()
	if n := strings.Count(out, "accept failed; retrying"); n != 2 {
		t.Errorf("%d Warn lines, want 2 (failures 1 and 2; the failures after the recovery join the burst):\n%s", n, out)
	}
	if n := strings.Count(out, "accepting connections again"); n != 1 || !strings.Contains(out, "failures=2 ") {
		t.Errorf("want one Info line, for the first recovery (failures=2):\n%s", out)
	}
	// 5 s on, another flap: counted; 6 s more (11 s after the Info line,
	// 6 s after the last failure: the same burst), a failure gets a Warn
	// line (LogInterval after the last), the recovery an Info line, each
	// counting the brief recoveries since the line before
	advance(5 * time.Second)
	accept("FA", 1)
	advance(6 * time.Second)
	accept("FA", 1)
	out = buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.Contains(lines[3], "accept failed") || !strings.HasSuffix(lines[3], "failures=6 brief_recoveries=3") ||
		!strings.Contains(lines[4], "accepting connections again") || !strings.Contains(lines[4], "failures=6 for=11.0") {
		t.Errorf("want a third Warn line, failures=6 brief_recoveries=3, and an Info line, failures=6 for=11.0xs:\n%s", out)
	}
	// a failure LogInterval after the burst's last begins a new burst
	advance(LogInterval)
	accept("FA", 1)
	out = buf.String()
	if n := strings.Count(out, "accept failed; retrying"); n != 4 || !strings.Contains(out, "retry_in=5ms failures=1\n") || !strings.HasSuffix(out, "failures=1 for=0s\n") {
		t.Errorf("a new burst: want a fourth Warn line and an Info line, failures=1:\n%s", out)
	}
}

func TestClosedListenerEnds(t *testing.T) {
	l := listen(t)
	l.Close()
	if _, err := New(l, "tcp").Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("err = %v, want net.ErrClosed", err)
	}
}

// TestCloseCutsBackoffShort: Close during a 1 s backoff ends Accept at once.
func TestCloseCutsBackoffShort(t *testing.T) {
	l := listen(t)
	a := New(&flaky{Listener: l, n: 1 << 30}, "tcp")
	a.UseLogger(slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil)))
	done := make(chan error, 1)
	go func() { _, err := a.Accept(); done <- err }()
	time.Sleep(50 * time.Millisecond)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v, want nil", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Accept after Close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still blocked 5s after Close")
	}
}

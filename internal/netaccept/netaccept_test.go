package netaccept

import (
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
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
		`level=WARN msg="smux: accept failed; retrying`, `err="accept: too many open files"`,
		"retry_in=5ms", "retry_in=10ms", "retry_in=20ms",
		`level=INFO msg="smux: accepting connections again"`, "failures=3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestLogIsRateLimited: a long burst logs one line per doubling of the
// backoff (5 ms .. 1 s: 9 lines), then every LogEvery retries.
func TestLogIsRateLimited(t *testing.T) {
	var logged []int
	backoff := time.Duration(0)
	for failures := 1; failures <= 30; failures++ {
		var log bool
		if backoff, log = next(backoff, failures); log {
			logged = append(logged, failures)
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30}; !slices.Equal(logged, want) {
		t.Fatalf("logged retries %v, want %v", logged, want)
	}
	if backoff != MaxBackoff {
		t.Fatalf("backoff %v after 30 failures, want %v", backoff, MaxBackoff)
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

package exchange

import (
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestRoundElapsed: a timeout message shows µs below 1ms ("239µs", not
// "0s") and whole milliseconds from 1ms on, as before.
func TestRoundElapsed(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{239*time.Microsecond + 400*time.Nanosecond, "239µs"},
		{50*time.Microsecond + 600*time.Nanosecond, "51µs"},
		{999*time.Microsecond + 700*time.Nanosecond, "1ms"},
		{time.Millisecond, "1ms"},
		{1*time.Millisecond + 499*time.Microsecond, "1ms"},
		{1*time.Millisecond + 500*time.Microsecond, "2ms"},
		{1234567 * time.Microsecond, "1.235s"},
	} {
		if got := roundElapsed(tc.in).String(); got != tc.want {
			t.Errorf("roundElapsed(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Tester60 #7: a ctx deadline shorter than the round trip to a real
// provider over loopback times the call out, and its message says how long
// it waited in µs when that was under a millisecond (whole ms from 1ms
// on); never "after 0s".
func TestSubMillisecondDeadlineMessage(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	// the first call connects and warms up; it must succeed
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 5*time.Second); res.Err != nil {
		t.Fatalf("warm-up call: %v", res.Err)
	}
	// An idle runtime may fire a timer up to ~1ms late; a goroutine that
	// keeps yielding makes the scheduler look at its timers often, so
	// that the 300µs deadline usually fires in µs.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	re := regexp.MustCompile(`timed out after (\S+) `)
	const deadline = 300 * time.Microsecond
	checked, inMicros := 0, 0
	for range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		err := ch.Invoke(ctx, mpCodec{}, echoInv("Sleep", 200), 0).Err
		took := time.Since(start)
		cancel()
		if err == nil {
			t.Fatal("a Sleep(200ms) call with a 300µs deadline succeeded")
		}
		e := wantStatusOneOf(t, err, spi.StatusServerTimeout, spi.StatusClientTimeout)
		if strings.Contains(e.Message, "deadline passed before sending") {
			continue // this process was descheduled before sending
		}
		m := re.FindStringSubmatch(e.Message)
		if m == nil {
			t.Fatalf("message %q does not say how long it waited", e.Message)
		}
		shown, perr := time.ParseDuration(m[1])
		if perr != nil || shown <= 0 {
			t.Fatalf("message %q shows %q, want a positive duration", e.Message, m[1])
		}
		if shown < time.Millisecond && !strings.HasSuffix(m[1], "µs") {
			t.Fatalf("message %q shows %q, want µs below 1ms", e.Message, m[1])
		}
		if shown >= time.Millisecond && shown%time.Millisecond != 0 {
			t.Fatalf("message %q shows %q, want whole ms from 1ms on", e.Message, m[1])
		}
		if shown > took+time.Millisecond {
			t.Fatalf("message %q shows %v, but the call took %v", e.Message, shown, took)
		}
		checked++
		if shown < time.Millisecond {
			inMicros++
			t.Logf("after %v: %s", took, e.Message)
			if inMicros == 3 {
				break
			}
		}
	}
	if checked == 0 {
		t.Fatal("20 calls with a 300µs deadline all found it passed before sending")
	}
	t.Logf("%d timeouts checked, %d of them under 1ms", checked, inMicros)
}

// wantStatusOneOf is wantStatus for either of two statuses.
func wantStatusOneOf(t testing.TB, err error, a, b spi.Status) *spi.Error {
	t.Helper()
	if spi.StatusOf(err) == b {
		return wantStatus(t, err, b)
	}
	return wantStatus(t, err, a)
}

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// The strategies with their default interval (60 s): the liveness check
// after silent call timeouts (spi.TimeoutCheck) is what finds a dead
// provider here, long before any heartbeat would.
var t12Strategies = []string{"heartbeat=idle", "heartbeat=dual", "heartbeat=none"}

// callFor calls Echo on ch with timeout.
func callFor(ch *exchange.Channel, timeout time.Duration) error {
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hi"}}
	return ch.Invoke(context.Background(), jsonCodec{}, inv, timeout).Err
}

// tester12 finding 2: a provider whose packets are dropped (a TCP proxy
// that stops forwarding without closing) with the default heartbeat
// (interval 60s) kept its channel for 243 s, every call to it waiting its
// full timeout. Now the first SERVER_TIMEOUT with nothing read since the
// call was sent makes the consumer ping at once, and the unanswered ping
// closes the channel within max(1 s, timeout) of that timeout: the test
// allows timeout + max(1 s, timeout) + 1 s. Each strategy, none included.
func TestT12_BlackHoledProviderClosedSoonAfterFirstTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	const bound = timeout + time.Second + time.Second // timeout + max(1s, timeout) + 1s
	for _, q := range t12Strategies {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			p := startProvider(t, heartbeat(t, q))
			px := testproxy.New(t, p.addr)
			c := dial(t, px.Addr(), heartbeat(t, q))
			if err := callFor(c.ch, timeout); err != nil {
				t.Fatalf("call before the black hole: %v", err)
			}
			px.BlackHole()
			var first time.Time
			var timeouts int
			deadline := time.Now().Add(10 * time.Second)
			for c.ch.Reason() == "" && time.Now().Before(deadline) {
				err := callFor(c.ch, timeout)
				switch st := spi.StatusOf(err); {
				case st == spi.StatusServerTimeout:
					timeouts++
					if first.IsZero() {
						first = time.Now()
					}
				case st == spi.StatusChannelInactive:
				default:
					t.Fatalf("call on a black-holed channel: %v (status %v)", err, st)
				}
			}
			if first.IsZero() {
				t.Fatal("no call failed SERVER_TIMEOUT")
			}
			r, ok := waitReason(c.closed, time.Until(deadline))
			took := time.Since(first)
			if !ok {
				t.Fatalf("black-holed channel still open 10 s later (%d calls timed out)", timeouts)
			}
			t.Logf("closed %v after the first SERVER_TIMEOUT (%d calls timed out): %s", took.Round(time.Millisecond), timeouts, r)
			if took > bound {
				t.Errorf("closed %v after the first SERVER_TIMEOUT, want within %v", took, bound)
			}
			if !strings.Contains(r, "a ping got no answer within 1s") || !strings.Contains(r, "timed out with nothing read") {
				t.Errorf("reason %q does not name the check", r)
			}
			if err := callFor(c.ch, timeout); !errors.Is(err, spi.ErrChannelInactive) || !strings.Contains(err.Error(), "liveness check") {
				t.Errorf("call after the close: %v, want CHANNEL_INACTIVE naming the check", err)
			}
		})
	}
}

// A provider that is merely slow — its handler sleeps past the call's
// timeout, its reader answers pings — keeps its channel: calls time out
// SERVER_TIMEOUT, the liveness check pings (the consumer writes pings with
// a 60 s interval), the ping is answered, nothing is closed.
func TestT12_SlowProviderIsNotClosed(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	slow := exchange.HandlerFunc(func(_ context.Context, req *exchange.Request) spi.Result {
		time.Sleep(4 * timeout) // past the consumer's deadline, ignoring it
		return echo(context.Background(), req)
	})
	for _, q := range t12Strategies {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			p := startProvider(t, heartbeat(t, q), func(o *exchange.Options) { o.Handler = slow })
			c := dial(t, p.addr, heartbeat(t, q))
			var timeouts int
			for end := time.Now().Add(3500 * time.Millisecond); time.Now().Before(end); {
				err := callFor(c.ch, timeout)
				if spi.StatusOf(err) != spi.StatusServerTimeout {
					t.Fatalf("call to a slow provider: %v, want SERVER_TIMEOUT", err)
				}
				timeouts++
			}
			if r := c.ch.Reason(); r != "" {
				t.Fatalf("slow provider's channel closed: %s", r)
			}
			if n := c.wrote.pings.Load(); n == 0 {
				t.Errorf("%d calls timed out and the consumer sent no ping: the check did not run", timeouts)
			} else {
				t.Logf("%d calls timed out, %d liveness pings, all answered", timeouts, n)
			}
			if got := p.wrote.answers.Load(); got != c.wrote.pings.Load() {
				t.Errorf("provider answered %d of %d pings", got, c.wrote.pings.Load())
			}
		})
	}
}

// heartbeat.ping.on.timeout=false turns the check off: a black-holed
// channel stays open while its calls time out (until the heartbeat's own
// verdict, minutes away with the defaults).
func TestT12_PingOnTimeoutOff(t *testing.T) {
	t.Parallel()
	q := "heartbeat=idle&heartbeat.ping.on.timeout=false"
	p := startProvider(t, heartbeat(t, q))
	px := testproxy.New(t, p.addr)
	c := dial(t, px.Addr(), heartbeat(t, q))
	if err := callFor(c.ch, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	px.BlackHole()
	for range 8 {
		if err := callFor(c.ch, 300*time.Millisecond); spi.StatusOf(err) != spi.StatusServerTimeout {
			t.Fatalf("call on a black-holed channel: %v, want SERVER_TIMEOUT", err)
		}
	}
	if r := c.ch.Reason(); r != "" {
		t.Fatalf("closed with the check off: %s", r)
	}
	if n := c.wrote.pings.Load(); n != 0 {
		t.Fatalf("%d pings sent with the check off", n)
	}
}

// What each strategy tells the exchange (spi.TimeoutCheck): on by default,
// the ping capped by idle's heartbeat.ping.timeout, dual's interval and
// nothing for none; heartbeat.ping.on.timeout=false turns it off, and a
// value that is not a bool fails Build naming the key.
func TestT12_TimeoutCheckSettings(t *testing.T) {
	for _, tc := range []struct {
		query   string
		maxWait time.Duration
		on      bool
	}{
		{"heartbeat=idle", 60 * time.Second, true},
		{"heartbeat=idle&heartbeat.interval=5s&heartbeat.ping.timeout=2s", 2 * time.Second, true},
		{"heartbeat=idle&heartbeat.ping.on.timeout=false", 60 * time.Second, false},
		{"heartbeat=dual&heartbeat.interval=10s", 10 * time.Second, true},
		{"heartbeat=dual&heartbeat.ping.on.timeout=0", 60 * time.Second, false},
		{"heartbeat=none", 0, true},
		{"heartbeat=none&heartbeat.ping.on.timeout=false", 0, false},
	} {
		tcheck, ok := heartbeat(t, tc.query).(spi.TimeoutCheck)
		if !ok {
			t.Fatalf("%s: the heartbeat does not implement spi.TimeoutCheck", tc.query)
		}
		if w, on := tcheck.TimeoutCheck(); w != tc.maxWait || on != tc.on {
			t.Errorf("%s: TimeoutCheck() = %v, %v; want %v, %v", tc.query, w, on, tc.maxWait, tc.on)
		}
	}
	for _, b := range []spi.HeartbeatBuilder{idle.Builder{}, dual.Builder{}, none.Builder{}} {
		_, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?heartbeat.ping.on.timeout=sometimes"))
		if err == nil || !strings.Contains(err.Error(), "heartbeat.ping.on.timeout") || !strings.Contains(err.Error(), "sometimes") {
			t.Errorf("%s: Build with heartbeat.ping.on.timeout=sometimes: %v, want an error naming key and value", b.Name(), err)
		}
	}
}

// A provider running its methods on the connection's reader
// (dispatcher=direct, exchange Options.Direct) cannot answer a ping while
// a method runs: one that runs past the call's timeout by less than
// max(1 s, timeout) keeps its channel (its late response counts as
// something read), one that runs longer has it closed by the check.
func TestT12_DirectDispatchLongHandlerIsClosed(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		sleep  time.Duration
		closed bool
	}{
		{timeout + 500*time.Millisecond, false},
		{timeout + 2*time.Second, true},
	} {
		t.Run(tc.sleep.String(), func(t *testing.T) {
			t.Parallel()
			h := exchange.HandlerFunc(func(_ context.Context, req *exchange.Request) spi.Result {
				time.Sleep(tc.sleep)
				return echo(context.Background(), req)
			})
			p := startProvider(t, heartbeat(t, "heartbeat=idle"), func(o *exchange.Options) { o.Handler, o.Direct = h, true })
			c := dial(t, p.addr, heartbeat(t, "heartbeat=idle"))
			if err := callFor(c.ch, timeout); spi.StatusOf(err) != spi.StatusServerTimeout {
				t.Fatalf("call: %v, want SERVER_TIMEOUT", err)
			}
			r, closed := waitReason(c.closed, 2500*time.Millisecond)
			if closed != tc.closed {
				t.Fatalf("handler of %v, timeout %v: closed %v (%q), want %v", tc.sleep, timeout, closed, r, tc.closed)
			}
		})
	}
}

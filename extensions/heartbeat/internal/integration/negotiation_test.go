package integration

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// records is a slog handler that keeps every message with its attributes.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) count(substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// hello sets a side's heartbeat hello from its query, as the kernel does
// with exchange.HeartbeatHello of the provider's or consumer's URL.
func hello(query string, logs *records) func(*exchange.Options) {
	return func(o *exchange.Options) {
		o.Hello = exchange.HeartbeatHello(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?" + query))
		if logs != nil {
			o.Logger = slog.New(logs)
		}
	}
}

// handshake is the kernel's first ping after connect: it carries the hello.
func handshake(t *testing.T, c *consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.ch.Ping(ctx); err != nil {
		t.Fatalf("handshake ping: %v", err)
	}
}

// Issue 4 item 7: a consumer with heartbeat=idle, interval 1s, retries 3
// and a provider on the default idle settings (interval 60 s, timeout
// 200 s): the consumer's settings travel in its first ping, and the
// provider closes a black-holed channel on the consumer-derived bound,
// 1 s + 3 × 1 s + 1 s slack = 5 s, not after 200 s.
func TestNegotiation_ProviderClosesOnConsumerBound(t *testing.T) {
	t.Parallel()
	const cq = "heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3"
	p := startProvider(t, heartbeat(t, "heartbeat=idle"), hello("heartbeat=idle", nil))
	px := testproxy.New(t, p.addr)
	c := dial(t, px.Addr(), heartbeat(t, cq), hello(cq, nil))
	handshake(t, c)
	peer, ok := c.ch.PeerHeartbeat()
	if s, _ := peer.Param("heartbeat"); !ok || s != "idle" {
		t.Fatalf("consumer learned the provider's settings %v (%v), want heartbeat=idle", peer, ok)
	}
	// about 5 s; its own heartbeat.timeout is 200 s
	closedAfterBlackHole(t, px, p.closed, 10*time.Second, 4*time.Second, 7*time.Second, "provider", "5s from the consumer's heartbeat settings")
}

// Issue 4 item 7: a dual consumer and an idle provider still work together
// (each side applies its own rules, pings are answered) and each side logs
// the strategy mismatch exactly once.
func TestNegotiation_StrategyMismatchLoggedOnce(t *testing.T) {
	t.Parallel()
	const cq = "heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=3s"
	plogs, clogs := &records{}, &records{}
	p := startProvider(t, heartbeat(t, "heartbeat=idle"), hello("heartbeat=idle&heartbeat.interval=1s", plogs),
		func(o *exchange.Options) { o.MinPingInterval = -1 }) // the test's pings interleave with the consumer's own
	c := dial(t, p.addr, heartbeat(t, cq), hello(cq, clogs))
	handshake(t, c)
	time.Sleep(2500 * time.Millisecond) // the dual consumer pings on its own meanwhile
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := c.ch.PingWith(ctx, exchange.HeartbeatHello(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?"+cq)))
		cancel()
		if err != nil {
			t.Fatalf("ping: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	const msg = "heartbeat strategy mismatch"
	if n := plogs.count(msg); n != 1 {
		t.Errorf("provider logged the mismatch %d times, want 1", n)
	}
	if n := clogs.count(msg); n != 1 {
		t.Errorf("consumer logged the mismatch %d times, want 1", n)
	}
	if n := clogs.count("this_side=dual peer=idle"); n != 1 {
		t.Error("consumer's mismatch line does not name both strategies (this_side=dual peer=idle)")
	}
	select {
	case r := <-c.closed:
		t.Fatalf("channel closed: %s", r)
	default:
	}
}

// A dual provider closes a dead consumer after its own heartbeat.timeout
// (DESIGN §6: both sides run both timers), whatever the consumer's
// settings: with a default idle consumer (interval 60 s, a derived bound of
// 5 min) it closed nothing in 12 s (nu40 finding 1). A live consumer
// answers the provider's own pings, so it is not closed meanwhile; and a
// consumer whose settings give a shorter bound still gets the shorter one.
func TestNegotiation_DualProviderClosesOnItsOwnTimeout(t *testing.T) {
	t.Parallel()
	const pq = "heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=2s"
	for _, tc := range []struct {
		consumer   string
		lo, hi     time.Duration // from the black hole
		reasonPart string
	}{
		// The channel is idle: its last read (a ping's answer) came up to
		// interval + a tick before the black hole, so the close comes
		// (timeout − interval − tick, timeout + tick] after it.
		{"heartbeat=idle", 500 * time.Millisecond, 5 * time.Second, "(heartbeat.timeout 2s)"},
		{"heartbeat=dual&heartbeat.interval=3s", 500 * time.Millisecond, 5 * time.Second, "(heartbeat.timeout 2s)"},
	} {
		t.Run(tc.consumer, func(t *testing.T) {
			t.Parallel()
			p := startProvider(t, heartbeat(t, pq), hello(pq, nil))
			px := testproxy.New(t, p.addr)
			c := dial(t, px.Addr(), heartbeat(t, tc.consumer), hello(tc.consumer, nil))
			handshake(t, c)
			// Alive and idle for 3 × the provider's timeout: its pings are answered.
			select {
			case r := <-p.closed:
				t.Fatalf("provider closed a live idle consumer: %s", r)
			case <-time.After(6 * time.Second):
			}
			closedAfterBlackHole(t, px, p.closed, 15*time.Second, tc.lo, tc.hi, "dual provider", tc.reasonPart)
		})
	}
	// The consumer's bound is shorter than a default dual provider's 180 s.
	t.Run("shorter consumer bound", func(t *testing.T) {
		t.Parallel()
		const cq = "heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3"
		p := startProvider(t, heartbeat(t, "heartbeat=dual"), hello("heartbeat=dual", nil))
		px := testproxy.New(t, p.addr)
		c := dial(t, px.Addr(), heartbeat(t, cq), hello(cq, nil))
		handshake(t, c)
		// 5 s + up to a tick (5s/3): about 5-6.7 s
		closedAfterBlackHole(t, px, p.closed, 15*time.Second, 4*time.Second, 9*time.Second, "dual provider",
			"5s from the consumer's heartbeat settings, under this provider's heartbeat.timeout 3m0s")
	})
}

// closedAfterBlackHole black-holes px and waits up to wait for closed,
// failing the test when nothing closes; it checks the time taken against
// [lo, hi] and that the reason contains want, and logs both as who.
func closedAfterBlackHole(t *testing.T, px *testproxy.Proxy, closed <-chan string, wait, lo, hi time.Duration, who, want string) {
	t.Helper()
	px.BlackHole()
	hole := time.Now()
	r, ok := waitReason(closed, wait)
	took := time.Since(hole)
	if !ok {
		t.Fatalf("%s kept the black-holed channel for %v", who, wait)
	}
	t.Logf("%s closed after %v: %s", who, took.Round(time.Millisecond), r)
	if took < lo || took > hi {
		t.Errorf("%s closed after %v, want within [%v, %v]", who, took, lo, hi)
	}
	if !strings.Contains(r, want) {
		t.Errorf("%s's reason %q does not contain %q", who, r, want)
	}
}

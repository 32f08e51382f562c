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
	px.BlackHole()
	hole := time.Now()
	r, ok := waitReason(p.closed, 10*time.Second)
	took := time.Since(hole)
	if !ok {
		t.Fatal("provider kept the black-holed channel for 10 s (its own heartbeat.timeout is 200 s)")
	}
	t.Logf("provider closed after %v: %s", took.Round(time.Millisecond), r)
	if took < 4*time.Second || took > 7*time.Second {
		t.Errorf("provider closed after %v, want about 5 s (within [4 s, 7 s])", took)
	}
	if !strings.Contains(r, "5s from the consumer's heartbeat settings") {
		t.Errorf("reason %q does not name the negotiated timeout", r)
	}
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

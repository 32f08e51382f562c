package lb_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/roundrobin"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func msSince(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// W2: a provider started 1 min ago, registered in a real (memory) registry,
// pushed to a kernel directory that merges it with a consumer URL started
// 1 h ago, weighs 10 at the balancer (weight 100, warm-up 10m), and 50 at
// 5 min: the provider's timestamp survives registry, merge and invoker.
func TestW2_TimestampThroughRegistryAndDirectory(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://w2"))
	mustNil(t, err)
	defer reg.Close()
	warming := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider&weight=100&warmup=10m&timestamp=" + msSince(start.Add(-time.Minute)))
	warm := spi.MustParse("airnode://127.0.0.1:20881/demo.Echo?side=provider&weight=10&timestamp=" + msSince(start.Add(-time.Hour)))
	mustNil(t, reg.Register(ctx, warming))
	mustNil(t, reg.Register(ctx, warm))

	consumer := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&loadbalance=roundrobin&weight=1&warmup=0&timestamp=" + msSince(start.Add(-time.Hour)))
	dir := directory.New(consumer, reg, "memory://w2", func(u spi.URL) (spi.Invoker, error) {
		return spitest.NewStubInvoker(u, nil), nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	mustNil(t, dir.Start(ctx))
	defer dir.Close()
	list := dir.List(nil)
	if len(list) != 2 {
		t.Fatalf("directory lists %d invokers, want 2", len(list))
	}
	var slow spi.Invoker
	for _, x := range list {
		if x.URL().Port() == 20880 {
			slow = x
		}
	}
	w := warmup.New(warmup.WithClock(clk.now))
	if got := w.Weight(slow.URL(), w.Now()); got != 10 {
		t.Fatalf("at 1 min: weight %d at the balancer, want 10 (invoker URL %s)", got, slow.URL())
	}

	// The balancer sees 10 against the warm provider's 10: exact alternation.
	lb, err := roundrobin.New(warmup.WithClock(clk.now)).Build(consumer)
	mustNil(t, err)
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	n := 0
	for range 1000 {
		if lb.Select(dir.List(inv), inv) == slow {
			n++
		}
	}
	if n != 500 {
		t.Fatalf("at 1 min the warming provider got %d of 1000 picks, want 500 (10 vs 10)", n)
	}

	clk.set(start.Add(4 * time.Minute))
	if got := w.Weight(slow.URL(), w.Now()); got != 50 {
		t.Fatalf("at 5 min: weight %d, want 50", got)
	}
}

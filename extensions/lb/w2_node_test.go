package lb_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// W2 end to end: two real provider nodes export demo.Echo into a memory
// registry, one started 1 min ago (weight 100, warm-up 10m: effective 10),
// one long warm with weight 10; a consumer node that started an hour
// earlier refers with roundrobin. The timestamp the provider node set at
// export reaches the consumer's invoker URLs, and the calls split exactly
// 10:10.
func TestW2_EndToEndThroughNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs() // one catalog: the memory registry is shared
	reg := spi.MustParse("memory://w2-nodes")
	now := time.Now()

	young := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0),
		kernel.WithClock(func() time.Time { return now.Add(-time.Minute) }))
	defer young.Close()
	if _, err := young.Export(ctx, demo.New("young", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?weight=100&warmup=10m")); err != nil {
		t.Fatal(err)
	}
	old := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0),
		kernel.WithClock(func() time.Time { return now.Add(-time.Hour) }))
	defer old.Close()
	if _, err := old.Export(ctx, demo.New("old", 10), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?weight=10")); err != nil {
		t.Fatal(err)
	}

	consumer := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithClock(func() time.Time { return now.Add(-2 * time.Hour) }))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode:///demo.Echo?loadbalance=roundrobin&timeout=5s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ref.Providers()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(ref.Providers()); n != 2 {
		t.Fatalf("%d providers, want 2", n)
	}
	w := warmup.New()
	for _, p := range ref.Providers() {
		want := int64(10)
		if got := w.Weight(p.URL(), w.Now()); got != want {
			t.Fatalf("provider %s: weight %d at the consumer, want %d (URL %s)", p.URL().Address(), got, want, p.URL())
		}
	}

	counts := map[string]int{}
	for range 200 {
		var info demo.Info
		if err := ref.Call(ctx, "Info", nil, &info); err != nil {
			t.Fatal(err)
		}
		counts[info.Node]++
	}
	if counts["young"] != 100 || counts["old"] != 100 {
		t.Fatalf("calls %v, want young=100 old=100 (10 vs 10)", counts)
	}
}

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

// fix-cy: a provider restarted on the same address while the registry
// still lists its old process's entry (ZooKeeper unreachable: consumers
// keep the last list) warms up from its own start, which it tells each new
// connection in its hello, not from the old entry's timestamp. Real nodes,
// real TCP on one fixed loopback port; the registry (memory) keeps the
// old entry throughout, as the consumer's directory does while ZooKeeper is
// down. Roundrobin, so that the shares are the weights' exactly.
func TestRestartedProviderWarmsUpFromItsOwnStartWhileItsOldEntryStays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs()
	regURL := spi.MustParse("memory://fixcy-restart")
	b, err := cat.Registry.Get("memory")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := b.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	const warm = 6 * time.Second
	hourAgo := func() time.Time { return time.Now().Add(-time.Hour) }
	export := func(name, addr string, clock func() time.Time) (*kernel.Node, spi.URL) {
		n := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0), kernel.WithClock(clock))
		e, err := n.Export(ctx, demo.New(name, 100), spi.MustParse("airnode://"+addr+"/demo.Echo?warmup="+warm.String()))
		if err != nil {
			t.Fatal(err)
		}
		return n, e.URL()
	}
	p1, u1 := export("p1", "127.0.0.1:0", hourAgo)
	defer p1.Close()
	old, u3 := export("p3", "127.0.0.1:0", hourAgo)
	defer old.Close()
	for _, u := range []spi.URL{u1, u3} {
		if err := reg.Register(ctx, u); err != nil { // the entries, kept as they are from now on
			t.Fatal(err)
		}
	}

	consumer := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode:///demo.Echo?loadbalance=roundrobin&timeout=5s"), regURL)
	if err != nil {
		t.Fatal(err)
	}
	share := func(calls int) float64 {
		n := 0
		for range calls {
			var info demo.Info
			if err := ref.Call(ctx, "Info", nil, &info); err != nil {
				t.Fatal(err)
			}
			if info.Node == "p3" {
				n++
			}
		}
		return float64(n) / float64(calls)
	}
	p3 := func() spi.Invoker {
		for _, p := range ref.Providers() {
			if p.URL().Address() == u3.Address() && p.Available() {
				return p
			}
		}
		return nil
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 15s", what)
			}
		}
	}
	waitFor("two connected providers", func() bool { return p3() != nil && len(ref.Providers()) == 2 })
	if s := share(200); s < 0.4 || s > 0.6 {
		t.Fatalf("warm p3 took %.0f%% of calls, want about 50%%", 100*s)
	}

	// SIGTERM p3 and start it again on the same address; the registry
	// keeps the old entry (timestamp an hour ago).
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	restarted, nu3 := export("p3", u3.Address(), time.Now)
	defer restarted.Close()
	started, _ := nu3.Int("timestamp", 0)
	w := warmup.New(warmup.WithLogger(quiet))
	var first int64
	waitFor("connection to the restarted p3", func() bool {
		x := p3()
		if x == nil {
			return false
		}
		ps, ok := x.(spi.ProviderStart)
		if !ok || ps.ProviderStarted() != started {
			return false
		}
		first = w.WeightOf(x, w.Now())
		return true
	})
	// Its weight counts from its start: at most its uptime's share of
	// the warm-up, plus a second's slack (without the fix: 100).
	upto := 100 * (time.Since(time.UnixMilli(started)) + time.Second) / warm
	if first < 1 || time.Duration(first) > upto {
		t.Fatalf("restarted p3's effective weight %d at the consumer, want 1..%d (uptime %v of warmup %v)", first, upto, time.Since(time.UnixMilli(started)), warm)
	}
	if s := share(300); s > 0.35 {
		t.Fatalf("restarted p3 took %.0f%% of calls right after its start, want a warm-up share (well under 50%%)", 100*s)
	}
	// And it ramps to its full share once its own warm-up is over.
	time.Sleep(time.Until(time.UnixMilli(started).Add(warm + 200*time.Millisecond)))
	if got := w.WeightOf(p3(), w.Now()); got != 100 {
		t.Fatalf("restarted p3's effective weight %d after its warm-up, want 100", got)
	}
	if s := share(200); s < 0.4 || s > 0.6 {
		t.Fatalf("restarted p3 took %.0f%% of calls once warm, want about 50%%", 100*s)
	}
}

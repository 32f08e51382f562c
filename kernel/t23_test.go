package kernel

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestT23_HungProviderLeavesDampedReference (tester23 N1): two providers
// that stay connected leave the registry within the damping window, one
// of them hung (its connection up through a proxy that stopped
// forwarding, as kill -STOP leaves it). Removal damping keeps both at
// first; the hung one, which does not answer the probe's ping, leaves
// within about 2.5 s (bound 5 s), while the healthy idle one is still
// kept.
func TestT23_HungProviderLeavesDampedReference(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t23-hung")
	var exps []*Exporter
	var proxies []*testproxy.Proxy
	for i := range 4 {
		px := testproxy.New(t, "") // hangs like kill -STOP when paused
		p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		e, err := p.Export(ctx, demo.New(fmt.Sprint("p", i), 100),
			spi.MustParse("airnode://127.0.0.1:0/demo.Echo?advertise="+px.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		real := e.srv.l.Addr().String()
		px.SetTarget(real)
		exps, proxies = append(exps, e), append(proxies, px)
	}
	c, _ := faultNode(t, cat, WithRegistry(reg))
	t.Cleanup(func() { // first: a paused proxy must not hold the nodes' Close
		for _, px := range proxies {
			px.Close()
		}
	})
	// actives: a per-provider filter wraps each provider's invoker, as
	// bench's attempt counter does (filter_protect.go).
	ref := referListing(t, c, "airnode:///demo.Echo?timeout=2s&actives=1000", 4)
	for _, e := range exps {
		if e.URL().Address() == e.srv.l.Addr().String() {
			t.Fatalf("provider published %s, its own address, not its proxy's", e.URL().Address())
		}
	}
	// p0 leaves first (one of four: removed at once, counted for
	// dampWindow), then hung p1 (two of four: damped), then healthy p2
	// (during the grace: damped too).
	proxies[1].Pause(true)
	for _, i := range []int{0, 1, 2} {
		if err := exps[i].unregister(ctx, "test"); err != nil {
			t.Fatal(err)
		}
	}
	keptAddrs := func() map[string]bool {
		m := map[string]bool{}
		for _, k := range ref.Kept() {
			m[k.Provider.Address()] = true
		}
		return m
	}
	hung, healthy := proxies[1].Addr(), proxies[2].Addr()
	if k := keptAddrs(); !k[hung] || !k[healthy] || len(k) != 2 {
		t.Fatalf("Kept() = %v, want the hung %s and the healthy %s kept by damping", ref.Kept(), hung, healthy)
	}
	start := time.Now()
	for keptAddrs()[hung] {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the hung provider is still kept after 5s: %v", ref.Kept())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the hung provider left the damped reference %v after its removal", time.Since(start).Round(10*time.Millisecond))
	for _, inv := range ref.Providers() {
		if inv.URL().Address() == hung {
			t.Fatalf("the hung provider %s is still in Providers", hung)
		}
	}
	// The healthy idle one answered the probe: kept past probeWait.
	time.Sleep(3 * time.Second) // past the directory's probeWait (2 s) and a recheck (500 ms)
	if k := keptAddrs(); !k[healthy] {
		t.Fatalf("Kept() = %v, want the healthy %s still kept by damping", ref.Kept(), healthy)
	}
	for i := range 10 {
		if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

// callsPerNode calls Info on ref from workers goroutines until stop,
// counting the answers per provider node name; errors are counted under
// "error".
func callsPerNode(t *testing.T, ref *Reference, workers int, stop <-chan struct{}) (counts func() map[string]int, wait func()) {
	var mu sync.Mutex
	m := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var info demo.Info
				err := ref.Call(context.Background(), "Info", nil, &info)
				mu.Lock()
				if err != nil {
					m["error"]++
					if m["error"] == 1 {
						t.Logf("first error: %v", err)
					}
				} else {
					m[info.Node]++
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	counts = func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]int, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return counts, wg.Wait
}

// TestT23_DrainingProviderGetsNoNewCalls (tester23 N2): two of four
// providers shut down with shutdown.wait 3s (two of four dropped at once:
// a damped share). Their draining event makes the consumer stop sending
// to them during the wait, instead of removal damping keeping them for
// its whole grace; and the calls keep succeeding on the other two.
func TestT23_DrainingProviderGetsNoNewCalls(t *testing.T) {
	// "actives": a per-provider filter wraps each provider's invoker, as
	// bench's attempt counter does (filter_protect.go).
	for _, q := range []string{"", "&actives=1000"} {
		t.Run("query="+q, func(t *testing.T) { drainingGetsNoNewCalls(t, q) })
	}
}

func drainingGetsNoNewCalls(t *testing.T, query string) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t23-drain" + strings.NewReplacer("&", "", "=", "").Replace(query))
	var provs []*Node
	for i := range 4 {
		wait := time.Duration(0)
		if i >= 2 {
			wait = 3 * time.Second // the two that drain
		}
		p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(wait))
		t.Cleanup(func() { _ = p.Close() })
		if _, err := p.Export(ctx, demo.New(fmt.Sprint("p", i), 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
		provs = append(provs, p)
	}
	c, _ := faultNode(t, cat, WithRegistry(reg))
	ref := referListing(t, c, "airnode:///demo.Echo?timeout=2s"+query, 4)
	stop := make(chan struct{})
	counts, wait := callsPerNode(t, ref, 4, stop)
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	var wg sync.WaitGroup
	for _, p := range provs[2:] {
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.Close() }()
	}
	// Within a second of the draining event the consumer sends them
	// nothing more, while their wait (3 s) goes on.
	time.Sleep(time.Second)
	before := counts()
	time.Sleep(1500 * time.Millisecond)
	after := counts()
	if time.Since(began) > 2900*time.Millisecond {
		t.Logf("warning: the check ran late (%v after the shutdown began); the wait may have ended", time.Since(began))
	}
	close(stop)
	wait()
	wg.Wait()
	for _, name := range []string{"p2", "p3"} {
		// allow the calls in flight (4 workers)
		if d := after[name] - before[name]; d > 4 {
			t.Errorf("draining provider %s got %d calls in the 1.5 s checked of its shutdown wait (%d -> %d), want none", name, d, before[name], after[name])
		}
	}
	for _, name := range []string{"p0", "p1"} {
		if after[name] <= before[name] {
			t.Errorf("provider %s got no calls while the others drained (%d -> %d)", name, before[name], after[name])
		}
	}
	if after["error"] > 0 {
		t.Errorf("%d calls failed", after["error"])
	}
	if k := ref.Kept(); len(k) != 0 {
		t.Errorf("Kept() = %v, want none (draining providers are not kept)", k)
	}
	t.Logf("calls before the 1.5 s check %v, after %v", before, after)
}

// TestT23_DrainingOnlyProviderKeepsServing: the draining event does not
// make a provider unavailable. A reference whose only provider drains
// (shutdown.wait 3s) keeps calling it, with success, through the wait.
func TestT23_DrainingOnlyProviderKeepsServing(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t23-drain-one")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(3*time.Second))
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Export(ctx, demo.New("only", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	c, _ := faultNode(t, cat, WithRegistry(reg))
	ref := referListing(t, c, "airnode:///demo.Echo?timeout=2s", 1)
	closed := make(chan struct{})
	go func() { defer close(closed); _ = p.Close() }()
	time.Sleep(200 * time.Millisecond)
	n := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); n++ {
		var info demo.Info
		if err := ref.Call(ctx, "Info", nil, &info); err != nil {
			t.Fatalf("call %d during the only provider's shutdown wait: %v", n, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	<-closed
	t.Logf("%d calls succeeded during the wait", n)
}

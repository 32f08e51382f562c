package p2c_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// who is a provider's service: Who answers its name after delay, or
// fails with SERVICE_ERROR while failing is set, and counts its calls.
type who struct {
	name    string
	delay   time.Duration
	failing atomic.Bool
	calls   atomic.Int64
}

func (w *who) Who(ctx context.Context) (string, error) {
	w.calls.Add(1)
	if w.failing.Load() {
		return "", errors.New("who: broken")
	}
	if w.delay > 0 {
		select {
		case <-time.After(w.delay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return w.name, nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// cluster runs provider nodes exporting t.Who on loopback TCP into one
// memory registry, and a consumer node.
type cluster struct {
	t     *testing.T
	cat   *extension.Catalogs
	reg   spi.URL
	nodes []*kernel.Node
}

func newCluster(t *testing.T) *cluster {
	c := &cluster{t: t, cat: bundle.Catalogs(), reg: spi.MustParse("memory://" + t.Name())}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.Close()
		}
	})
	return c
}

// provider exports w, a service with a method Who, on a new node at
// 127.0.0.1:0 (transport tcp).
func (c *cluster) provider(ctx context.Context, w any, query string) {
	c.t.Helper()
	n := kernel.NewNode(c.cat, kernel.WithLogger(quiet), kernel.WithRegistry(c.reg), kernel.WithShutdownWait(0))
	c.nodes = append(c.nodes, n)
	if _, err := n.Export(ctx, w, spi.MustParse("airnode://127.0.0.1:0/t.Who?transport=tcp"+query)); err != nil {
		c.t.Fatal(err)
	}
}

// refer returns a consumer's reference to t.Who with query, once it
// lists want providers.
func (c *cluster) refer(ctx context.Context, query string, want int) *kernel.Reference {
	c.t.Helper()
	n := kernel.NewNode(c.cat, kernel.WithLogger(quiet))
	c.nodes = append(c.nodes, n)
	ref, err := n.Refer(ctx, spi.MustParse("airnode:///t.Who?"+query), c.reg)
	if err != nil {
		c.t.Fatal(err)
	}
	for len(ref.Providers()) < want {
		if ctx.Err() != nil {
			c.t.Fatalf("%d providers listed, want %d", len(ref.Providers()), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ref
}

// run makes n calls of Who from c concurrent callers and returns the
// number that failed.
func run(ctx context.Context, ref *kernel.Reference, n, c int) int64 {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if _, err := ref.Invoke(ctx, "Who"); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return failed.Load()
}

// keepCalling keeps c goroutines calling Who until stop, which waits for
// them; failed counts the calls that failed.
func keepCalling(ctx context.Context, ref *kernel.Reference, c int) (failed *atomic.Int64, stop func()) {
	done := make(chan struct{})
	failed = new(atomic.Int64)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := ref.Invoke(ctx, "Who"); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	return failed, func() { close(done); wg.Wait() }
}

// Three providers, one of which sleeps 20 ms per call: over 2,000 calls
// from 8 callers p2c sends it under 10 % (its first answer sets its
// estimate; it is drawn into two pairs of three and loses both), where
// random sends it about a third.
func TestSlowProviderGetsFewCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, lb := range []string{"p2c", "random"} {
		c := newCluster(t)
		slow := &who{name: "slow", delay: 20 * time.Millisecond}
		fast1, fast2 := &who{name: "fast1"}, &who{name: "fast2"}
		for _, w := range []*who{slow, fast1, fast2} {
			c.provider(ctx, w, "")
		}
		ref := c.refer(ctx, "loadbalance="+lb+"&timeout=5s", 3)
		if failed := run(ctx, ref, 2000, 8); failed != 0 {
			t.Fatalf("%s: %d calls failed", lb, failed)
		}
		total := slow.calls.Load() + fast1.calls.Load() + fast2.calls.Load()
		share := float64(slow.calls.Load()) / float64(total)
		t.Logf("%s: slow %d, fast %d and %d of %d calls (slow %.1f %%)", lb, slow.calls.Load(), fast1.calls.Load(), fast2.calls.Load(), total, 100*share)
		switch {
		case lb == "p2c" && share >= 0.10:
			t.Fatalf("p2c sent the 20 ms provider %.1f %% of the calls, want under 10 %%", 100*share)
		case lb == "random" && share < 0.2:
			t.Fatalf("random sent the 20 ms provider %.1f %% of the calls, want about a third (is the comparison valid?)", 100*share)
		}
	}
}

// A provider whose calls start failing (SERVICE_ERROR at once, which
// outlier ejection does not count) gets few of the calls that follow: a
// failed call weighs as its round trip plus the timeout.
func TestFailingProviderGetsFewCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newCluster(t)
	bad, good1, good2 := &who{name: "bad"}, &who{name: "good1"}, &who{name: "good2"}
	for _, w := range []*who{bad, good1, good2} {
		c.provider(ctx, w, "")
	}
	// timeout=5s is the failure penalty: under a starved -race run the
	// healthy providers' estimates reach 100-300 ms, and score × (calls in
	// flight + 1) with 8 callers then rivals a 1 s penalty (182 of 2,000
	// calls once); the rule under test is that failures outweigh latency.
	ref := c.refer(ctx, "loadbalance=p2c&timeout=5s", 3)
	if failed := run(ctx, ref, 600, 8); failed != 0 {
		t.Fatalf("%d calls failed while every provider answered", failed)
	}
	if bad.calls.Load() == 0 {
		t.Fatal("the provider that will fail got no call while it answered: the test proves nothing")
	}
	before := bad.calls.Load()
	bad.failing.Store(true)
	const n = 2000
	failed := run(ctx, ref, n, 8)
	got := bad.calls.Load() - before
	t.Logf("failing provider: %d of %d calls (%d failed), %d before it failed", got, n, failed, before)
	if got > n/20 {
		t.Fatalf("the failing provider got %d of %d calls, want at most 5 %%", got, n)
	}
}

// A provider that joins while calls flow gets calls within a second,
// although it is warming up (weight 1 of 100 for its first 6 s).
func TestNewProviderGetsCallsWithinASecond(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newCluster(t)
	a, b := &who{name: "a"}, &who{name: "b"}
	c.provider(ctx, a, "")
	c.provider(ctx, b, "")
	ref := c.refer(ctx, "loadbalance=p2c", 2)
	_, stop := keepCalling(ctx, ref, 4)
	defer stop()
	time.Sleep(200 * time.Millisecond) // a and b have estimates

	fresh := &who{name: "fresh"}
	start := time.Now()
	c.provider(ctx, fresh, "")
	for fresh.calls.Load() == 0 {
		if time.Since(start) > time.Second {
			t.Fatalf("the new provider got no call within 1s (a %d, b %d calls)", a.calls.Load(), b.calls.Load())
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("first call to the new provider %v after its export", time.Since(start).Round(time.Millisecond))
}

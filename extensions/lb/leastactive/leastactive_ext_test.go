package leastactive_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/leastactive"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, leastactive.Builder{}) }

func build(t *testing.T) spi.LoadBalance {
	t.Helper()
	lb, err := leastactive.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

func stub(i int, params string, fn func(context.Context, *spi.Invocation) spi.Result) *spitest.StubInvoker {
	return spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i, params)), fn)
}

var echo = &spi.Invocation{Service: "demo.Echo", Method: "Echo"}

// L2: one provider answers in 2 s, the other at once; 20 concurrent callers
// for 3 s with a 1 s call timeout: the slow one gets at most 5% of the
// calls, and both active counts are 0 afterwards although the slow calls
// timed out.
func TestL2_SlowProviderGetsFewCalls(t *testing.T) {
	slow := stub(1, "", func(ctx context.Context, _ *spi.Invocation) spi.Result {
		select {
		case <-time.After(2 * time.Second):
			return spi.Result{Value: "late"}
		case <-ctx.Done():
			return spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "timed out: %w", ctx.Err())}
		}
	})
	fast := stub(2, "", nil)
	l := []spi.Invoker{slow, fast}
	lb := build(t)

	stop := time.Now().Add(3 * time.Second)
	var timeouts atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if r := lb.Select(l, echo).Invoke(ctx, echo); r.Err != nil {
					timeouts.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	total := slow.Calls() + fast.Calls()
	share := float64(slow.Calls()) / float64(total)
	t.Logf("slow %d, fast %d calls (%.3f%%), %d timed out", slow.Calls(), fast.Calls(), 100*share, timeouts.Load())
	if share > 0.05 {
		t.Fatalf("slow provider got %.1f%% of %d calls, want at most 5%%", 100*share, total)
	}
	if a, b := slow.Stats().Active(), fast.Stats().Active(); a != 0 || b != 0 {
		t.Fatalf("active counts after the run: slow %d, fast %d; want 0 and 0", a, b)
	}
}

func TestFewestActiveWins(t *testing.T) {
	a, b, c := stub(1, "", nil), stub(2, "", nil), stub(3, "weight=1000", nil)
	a.Stats().Begin()
	c.Stats().Begin()
	c.Stats().Begin()
	lb := build(t)
	for range 1000 {
		if x := lb.Select([]spi.Invoker{a, b, c}, echo); x != b {
			t.Fatalf("picked %s, want the idle one", x.URL())
		}
	}
}

// Ties are broken by weight: 1:3 among the tied, the busier one never.
func TestTiesByWeight(t *testing.T) {
	a, b, busy := stub(1, "weight=100", nil), stub(2, "weight=300", nil), stub(3, "weight=10000", nil)
	busy.Stats().Begin()
	lb := build(t)
	counts := map[spi.Invoker]int{}
	const n = 80_000
	for range n {
		counts[lb.Select([]spi.Invoker{a, busy, b}, echo)]++
	}
	if counts[busy] != 0 {
		t.Fatalf("the busier provider was picked %d times", counts[busy])
	}
	if share := float64(counts[a]) / n; math.Abs(share-0.25) > 0.015 {
		t.Fatalf("weight-100 provider got %.4f of the tied picks, want 0.25", share)
	}
}

func TestSelectDoesNotAllocate(t *testing.T) {
	lb := build(t)
	var l []spi.Invoker
	for i := range 10 {
		l = append(l, stub(i+1, fmt.Sprintf("weight=%d", 10+i%3), nil))
	}
	if n := testing.AllocsPerRun(1000, func() { lb.Select(l, echo) }); n != 0 {
		t.Fatalf("Select allocates %v times per call", n)
	}
}

package p2c_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/p2c"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, p2c.Builder{}) }

func build(t *testing.T, query string) spi.LoadBalance {
	t.Helper()
	lb, err := p2c.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo" + query))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

func stub(i int, params string) *spitest.StubInvoker {
	return spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i, params)), nil)
}

var echo = &spi.Invocation{Service: "demo.Echo", Method: "Echo"}

func TestBuild(t *testing.T) {
	for q, want := range map[string][2]time.Duration{
		"":                                   {10 * time.Second, time.Second},
		"?p2c.decay=2s&timeout=300":          {2 * time.Second, 300 * time.Millisecond},
		"?p2c.decay=1ms":                     {time.Millisecond, time.Second},
		"?p2c.decay=600000&timeout=1m":       {10 * time.Minute, time.Minute},
		"?methods.Echo.timeout=5s&timeout=2": {10 * time.Second, 2 * time.Millisecond},
	} {
		lb := build(t, q).(*p2c.Balancer)
		if lb.Decay() != want[0] || lb.Penalty() != want[1] {
			t.Errorf("%q: decay %v, penalty %v; want %v, %v", q, lb.Decay(), lb.Penalty(), want[0], want[1])
		}
	}
	for q, key := range map[string]string{
		"p2c.decay=soon": "p2c.decay",
		"p2c.decay=0":    "p2c.decay",
		"p2c.decay=11m":  "p2c.decay",
		"p2c.decay=-1s":  "p2c.decay",
		"timeout=x":      "timeout",
		"timeout=0":      "timeout",
	} {
		_, err := p2c.Builder{}.Build(spi.MustParse("consumer://h/demo.Echo?" + q))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("%s: got %v, want a ParamError naming %s", q, err, key)
		}
	}
}

// record makes x look as if it had finished n calls of d each, failed ones
// included.
func record(x *spitest.StubInvoker, n int, d time.Duration, ok bool) {
	for range n {
		x.Stats().Begin()
		x.Stats().End(d, ok)
	}
}

// With two providers both are the candidates: the lower score always wins.
func TestLowerScoreWins(t *testing.T) {
	a, b := stub(1, ""), stub(2, "")
	record(a, 10, 10*time.Millisecond, true)
	record(b, 10, time.Millisecond, true)
	lb := build(t, "")
	l := []spi.Invoker{a, b}
	for range 200 {
		if x := lb.Select(l, echo); x != b {
			t.Fatal("picked the provider 10 times slower")
		}
	}
	// In-flight calls count: 1 ms × (12 + 1) > 10 ms × (0 + 1).
	for range 12 {
		b.Stats().Begin()
	}
	for range 200 {
		if x := lb.Select(l, echo); x != a {
			t.Fatal("picked the provider with 12 calls in flight")
		}
	}
}

// tester62 finding 1: a provider that stalls finishes nothing, so its
// estimate, fed by no answer, stays as fast as its last answers (and
// decays) while a peer's holds a peak: by estimates alone every caller
// ended up waiting on it. A call in flight counts as at least as slow as
// it has waited.
func TestStalledProviderLosesByItsWait(t *testing.T) {
	stalled, peer := stub(1, ""), stub(2, "")
	record(stalled, 10, 100*time.Microsecond, true)
	record(peer, 10, 20*time.Millisecond, true) // one slow answer: a peak
	lb := build(t, "")
	l := []spi.Invoker{stalled, peer}
	lb.Select(l, echo) // both estimates taken in
	for range 8 {
		stalled.Stats().BeginAt(spi.Mono() - 2*time.Second) // waiting for 2 s
	}
	for range 200 {
		if lb.Select(l, echo) != peer {
			t.Fatal("picked the provider with 8 calls waiting 2 s (100 µs × 9 by its estimate) over one answering in 20 ms")
		}
	}
}

// A provider whose calls start failing fast loses to a slower one that
// answers: a failed call counts as its round trip plus the timeout.
func TestFailuresCountAsSlow(t *testing.T) {
	a, b := stub(1, ""), stub(2, "")
	record(a, 10, 5*time.Millisecond, true)
	record(b, 10, time.Millisecond, true)
	lb := build(t, "?timeout=500ms")
	l := []spi.Invoker{a, b}
	if lb.Select(l, echo) != b {
		t.Fatal("want the faster provider before it fails")
	}
	record(b, 3, 10*time.Microsecond, false)
	for range 200 {
		if x := lb.Select(l, echo); x != a {
			t.Fatal("picked the provider whose calls fail")
		}
	}
}

// A provider with no finished call scores 0 while nothing is in flight to
// it, and penalty × in flight once something is.
func TestNewProviderTriedOnce(t *testing.T) {
	old, fresh := stub(1, ""), stub(2, "")
	record(old, 10, 100*time.Microsecond, true)
	lb := build(t, "")
	l := []spi.Invoker{old, fresh}
	if lb.Select(l, echo) != fresh {
		t.Fatal("a new provider with nothing in flight was not tried")
	}
	fresh.Stats().Begin() // its first call is on its way
	for range 100 {
		if lb.Select(l, echo) != old {
			t.Fatal("picked the new provider again before its first answer")
		}
	}
}

// Weight 0 is never a candidate; with one provider left of positive
// weight it is returned without scoring, however slow.
func TestWeightZeroNeverDrawn(t *testing.T) {
	slow, off := stub(1, ""), stub(2, "weight=0")
	record(slow, 5, time.Second, true)
	lb := build(t, "")
	for range 200 {
		if lb.Select([]spi.Invoker{off, slow}, echo) != slow {
			t.Fatal("picked a provider of weight 0")
		}
	}
}

// Warm-up weighs the draw: a provider at weight 1 (just started, warmup
// 10m) next to two warm ones at 100 is a candidate in about 1.5 % of the
// picks, so it gets few calls although, with no sample yet, it wins every
// pair it is drawn into.
func TestWarmingProviderDrawnLess(t *testing.T) {
	now := time.Now().UnixMilli()
	cold := stub(1, fmt.Sprintf("warmup=10m&timestamp=%d", now))
	a, b := stub(2, ""), stub(3, "")
	lb := build(t, "")
	l := []spi.Invoker{cold, a, b}
	counts := map[spi.Invoker]int{}
	const n = 20_000
	for range n {
		x := lb.Select(l, echo)
		counts[x]++
		// A fresh sample each time keeps every provider's score equal
		// and nothing in flight: ties go to the first drawn.
		record(x.(*spitest.StubInvoker), 1, time.Millisecond, true)
	}
	share := float64(counts[cold]) / n
	t.Logf("cold %d, warm %d and %d", counts[cold], counts[a], counts[b])
	if share > 0.02 {
		t.Fatalf("a provider at weight 1 next to two at 100 got %.2f %% of the picks, want < 2 %%", 100*share)
	}
}

// With two providers both are always drawn, so the draw's weighting did
// nothing (tester24: a provider at weight 1 of 100 got 50.3 % of the
// calls); a pair whose second candidate was redrawn compares loads
// divided by weight, so the light one wins only pairs drawn on merit
// (2 % of the picks at most).
func TestWarmingProviderOfTwo(t *testing.T) {
	cold := stub(1, fmt.Sprintf("warmup=10m&timestamp=%d", time.Now().UnixMilli()))
	warm := stub(2, "")
	lb := build(t, "")
	l := []spi.Invoker{cold, warm}
	counts := map[spi.Invoker]int{}
	const n = 20_000
	for range n {
		x := lb.Select(l, echo)
		counts[x]++
		record(x.(*spitest.StubInvoker), 1, time.Millisecond, true) // equally fast
	}
	t.Logf("cold %d, warm %d", counts[cold], counts[warm])
	if share := float64(counts[cold]) / n; share > 0.05 {
		t.Fatalf("a provider at weight 1 next to one at 100 got %.2f %% of the picks, want < 5 %%", 100*share)
	}
	// Equal weights: the division changes nothing, the faster one wins.
	a, b := stub(3, "weight=50"), stub(4, "weight=50")
	record(a, 5, 2*time.Millisecond, true)
	record(b, 5, time.Millisecond, true)
	for range 100 {
		if lb.Select([]spi.Invoker{a, b}, echo) != b {
			t.Fatal("equal weights: picked the slower provider")
		}
	}
}

func TestSelectDoesNotAllocate(t *testing.T) {
	lb := build(t, "")
	var l []spi.Invoker
	for i := range 10 {
		x := stub(i+1, "")
		x.Invoke(context.Background(), echo)
		l = append(l, x)
	}
	lb.Select(l, echo)
	for range 100 { // every provider's estimate exists
		lb.Select(l, echo)
	}
	if n := testing.AllocsPerRun(1000, func() { lb.Select(l, echo) }); n != 0 {
		t.Fatalf("Select allocates %v times per call", n)
	}
	w := build(t, "")
	var lw []spi.Invoker
	for i := range 10 {
		lw = append(lw, stub(i+1, fmt.Sprintf("weight=%d", 10+i)))
	}
	for range 100 {
		w.Select(lw, echo)
	}
	if n := testing.AllocsPerRun(1000, func() { w.Select(lw, echo) }); n != 0 {
		t.Fatalf("Select with weights allocates %v times per call", n)
	}
}

// noStats is an invoker without Stats: it always scores 0, so every pick
// is the first candidate drawn.
type noStats struct{ u spi.URL }

func (n noStats) URL() spi.URL                                       { return n.u }
func (n noStats) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (n noStats) Available() bool                                    { return true }
func (n noStats) Stats() *spi.Stats                                  { return nil }
func (n noStats) Close() error                                       { return nil }

// Candidates are drawn in proportion to their weights: with equal scores
// the first drawn wins, so picks follow the weights (1:3:0:4 here).
func TestDrawFollowsWeights(t *testing.T) {
	var l []spi.Invoker
	for i, w := range []int{100, 300, 0, 400} {
		l = append(l, &noStats{spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?weight=%d", i+1, w))})
	}
	lb := build(t, "")
	counts := make([]int, len(l))
	const n = 80_000
	for range n {
		x := lb.Select(l, echo)
		for k := range l {
			if l[k] == x {
				counts[k]++
			}
		}
	}
	for k, want := range []float64{0.125, 0.375, 0, 0.5} {
		if got := float64(counts[k]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("provider %d: %.4f of the picks, want %.3f (counts %v)", k, got, want, counts)
		}
	}
}

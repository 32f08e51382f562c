package roundrobin_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/roundrobin"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, roundrobin.Builder{}) }

func invokers(params ...string) []spi.Invoker {
	out := make([]spi.Invoker, len(params))
	for i, p := range params {
		out[i] = spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i+1, p)), nil)
	}
	return out
}

func build(t *testing.T) spi.LoadBalance {
	t.Helper()
	lb, err := roundrobin.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

var echo = &spi.Invocation{Service: "demo.Echo", Method: "Echo"}

// L1: weights A=5, B=1, C=1: first cycle A A B A C A A; 70,000 picks give
// exactly 50,000 / 10,000 / 10,000.
func TestL1_SmoothWeighted(t *testing.T) {
	l := invokers("weight=5", "weight=1", "weight=1")
	names := map[spi.Invoker]string{l[0]: "A", l[1]: "B", l[2]: "C"}
	lb := build(t)
	var seq []string
	for range 7 {
		seq = append(seq, names[lb.Select(l, echo)])
	}
	if got := strings.Join(seq, " "); got != "A A B A C A A" {
		t.Fatalf("first cycle %q, want \"A A B A C A A\"", got)
	}
	counts := map[string]int{}
	for range 70_000 - 7 {
		counts[names[lb.Select(l, echo)]]++
	}
	counts["A"] += 5
	counts["B"]++
	counts["C"]++
	if counts["A"] != 50_000 || counts["B"] != 10_000 || counts["C"] != 10_000 {
		t.Fatalf("70,000 picks gave %v, want A=50000 B=10000 C=10000", counts)
	}
}

// Under concurrency the counts stay exact: Select is serialised per method.
func TestConcurrentCountsExact(t *testing.T) {
	l := invokers("weight=5", "weight=1", "weight=1")
	lb := build(t)
	var mu sync.Mutex
	counts := map[spi.Invoker]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			local := map[spi.Invoker]int{}
			for range 7000 {
				local[lb.Select(l, echo)]++
			}
			mu.Lock()
			for k, v := range local {
				counts[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[l[0]] != 40_000 || counts[l[1]] != 8_000 || counts[l[2]] != 8_000 {
		t.Fatalf("56,000 concurrent picks gave %d/%d/%d, want 40000/8000/8000", counts[l[0]], counts[l[1]], counts[l[2]])
	}
}

func TestStatePerMethod(t *testing.T) {
	l := invokers("weight=2", "weight=1")
	lb := build(t)
	other := &spi.Invocation{Service: "demo.Echo", Method: "Sleep"}
	// Interleaving two methods does not disturb either sequence.
	var a, b []spi.Invoker
	for range 3 {
		a = append(a, lb.Select(l, echo))
		b = append(b, lb.Select(l, other))
	}
	want := []spi.Invoker{l[0], l[1], l[0]}
	for i := range want {
		if a[i] != want[i] || b[i] != want[i] {
			t.Fatalf("pick %d: Echo %v, Sleep %v, want %v", i, a[i].URL(), b[i].URL(), want[i].URL())
		}
	}
}

func TestProviderLeavesAndJoins(t *testing.T) {
	l := invokers("weight=1", "weight=1", "weight=1")
	lb := build(t)
	for range 10 {
		lb.Select(l, echo)
	}
	two := l[:2]
	counts := map[spi.Invoker]int{}
	for range 1000 {
		counts[lb.Select(two, echo)]++
	}
	// Current weights carried over from before shift the split by at most one.
	if off(counts[l[0]], 500) || off(counts[l[1]], 500) {
		t.Fatalf("after a provider left: %d/%d, want 500/500 ± 1", counts[l[0]], counts[l[1]])
	}
	back := []spi.Invoker{l[0], l[1], l[2]}
	counts = map[spi.Invoker]int{}
	for range 999 {
		counts[lb.Select(back, echo)]++
	}
	if off(counts[l[0]], 333) || off(counts[l[1]], 333) || off(counts[l[2]], 333) {
		t.Fatalf("after it came back: %v, want 333 each ± 1", counts)
	}
}

// off reports whether got is off by more than one from want.
func off(got, want int) bool { return got < want-1 || got > want+1 }

func TestWarmingUpWeightChangesKeepOrder(t *testing.T) {
	ts := strconv.FormatInt(time.Now().Add(-5*time.Minute).UnixMilli(), 10)
	l := invokers("", "timestamp="+ts) // about 100 and 50
	lb := build(t)
	counts := map[spi.Invoker]int{}
	for range 3000 {
		counts[lb.Select(l, echo)]++
	}
	if c := counts[l[1]]; c < 900 || c > 1100 {
		t.Fatalf("half-warm provider got %d of 3000 picks, want about 1000", c)
	}
}

func TestSelectDoesNotAllocateOnceWarm(t *testing.T) {
	lb := build(t)
	l := invokers("weight=5", "weight=1", "weight=1", "", "", "", "", "", "", "")
	lb.Select(l, echo)
	if n := testing.AllocsPerRun(1000, func() { lb.Select(l, echo) }); n != 0 {
		t.Fatalf("Select allocates %v times per call", n)
	}
}

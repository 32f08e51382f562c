package random_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, random.Builder{}) }

func invokers(params ...string) []spi.Invoker {
	out := make([]spi.Invoker, len(params))
	for i, p := range params {
		out[i] = spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i+1, p)), nil)
	}
	return out
}

func build(t *testing.T, opts ...warmup.Option) spi.LoadBalance {
	t.Helper()
	lb, err := random.New(opts...).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

// shares picks n times and checks each invoker's share against want within
// tol (absolute); tol is >= 8 standard deviations, so the test never flakes.
func shares(t *testing.T, lb spi.LoadBalance, l []spi.Invoker, n int, want []float64, tol float64) {
	t.Helper()
	got := map[spi.Invoker]int{}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	for range n {
		got[lb.Select(l, inv)]++
	}
	for i, x := range l {
		share := float64(got[x]) / float64(n)
		if math.Abs(share-want[i]) > tol {
			t.Errorf("invoker %d: share %.4f, want %.4f ± %.3f", i, share, want[i], tol)
		}
	}
}

func TestWeighted(t *testing.T) {
	l := invokers("weight=10", "weight=20", "weight=70", "weight=0")
	shares(t, build(t), l, 100_000, []float64{0.1, 0.2, 0.7, 0}, 0.012)
}

func TestEqualWeightsUniform(t *testing.T) {
	l := invokers("", "", "", "")
	shares(t, build(t), l, 100_000, []float64{0.25, 0.25, 0.25, 0.25}, 0.012)
}

func TestWarmingUpGetsLess(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	started := strconv.FormatInt(now.Add(-5*time.Minute).UnixMilli(), 10)
	lb := build(t, warmup.WithClock(func() time.Time { return now }))
	l := invokers("", "timestamp="+started) // 100 and 50
	shares(t, lb, l, 90_000, []float64{2.0 / 3, 1.0 / 3}, 0.014)
}

func TestSelectDoesNotAllocate(t *testing.T) {
	lb := build(t)
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	ts := "timestamp=" + strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	for name, l := range map[string][]spi.Invoker{
		"equal":   invokers("", "", "", "", "", "", "", "", "", ""),
		"weights": invokers("weight=1", "weight=2", "weight=3", "warmup=10m&"+ts, ts),
	} {
		if n := testing.AllocsPerRun(1000, func() { lb.Select(l, inv) }); n != 0 {
			t.Errorf("%s: Select allocates %v times per call", name, n)
		}
	}
}

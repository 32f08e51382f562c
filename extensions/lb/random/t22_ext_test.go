package random_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestT22_WarmingShareFollowsTheCurve: with weights cached per list and
// picks by binary search (tester22 finding 6), a provider warming up
// still gets the share its warm-up weight gives it at each instant
// (Dubbo's formula: 100 × uptime / 10 min next to a warm 100 and a warm
// 50), and its full share once warm. 40,000 picks per instant: the
// binomial standard deviation is at most 0.25 %; the bound is 1.5 %.
func TestT22_WarmingShareFollowsTheCurve(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l := []spi.Invoker{
		spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?weight=100"), nil),
		spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.2:20880/demo.Echo?weight=100&warmup=10m&timestamp=%d", start.UnixMilli())), nil),
		spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.3:20880/demo.Echo?weight=50"), nil),
	}
	for _, b := range []spi.LoadBalanceBuilder{random.New(warmup.WithClock(clock))} {
		lb, err := b.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
		if err != nil {
			t.Fatal(err)
		}
		for _, up := range []time.Duration{0, 90 * time.Second, 2*time.Minute + 30*time.Second, 5 * time.Minute, 9 * time.Minute, 10 * time.Minute, time.Hour} {
			mu.Lock()
			now = start.Add(up)
			mu.Unlock()
			warm := math.Max(1, math.Floor(100*min(up.Seconds(), 600)/600)) // Effective
			want := warm / (warm + 150)
			const n = 40000
			got := 0
			for range n {
				if lb.Select(l, nil) == l[1] {
					got++
				}
			}
			if share := float64(got) / n; math.Abs(share-want) > 0.015 {
				t.Errorf("%s after %v: the warming provider's share %.3f, want %.3f (weight %v of %v)", b.Name(), up, share, want, warm, warm+150)
			}
		}
	}
}

// BenchmarkT22_Retry measures a pick and a failover retry's pick (the
// list without the provider tried: a new slice each time) with 10 and
// 1,000 providers, a tenth warming up.
//
//	go test -run '^$' -bench BenchmarkT22_Retry -benchmem ./extensions/lb/random/
func BenchmarkT22_Retry(b *testing.B) {
	now := time.Now()
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := make([]spi.Invoker, n)
			for i := range l {
				started := now.Add(-time.Hour)
				if i%10 == 0 {
					started = now.Add(-time.Minute)
				}
				l[i] = spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.%d.%d.%d:20880/demo.Echo?weight=100&warmup=10m&timestamp=%d", i>>16&255, i>>8&255, i&255, started.UnixMilli())), nil)
			}
			lb, _ := random.Builder{}.Build(spi.URL{})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// a call and its retry: the list, then the list without the one tried
				lb.Select(l, nil)
				cand := make([]spi.Invoker, 0, n-1)
				cand = append(cand, l[:i%n]...)
				cand = append(cand, l[i%n+1:]...)
				lb.Select(cand, nil)
				i++
			}
		})
	}
}

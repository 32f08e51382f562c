package p2c_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/p2c"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestT22_P2CWarmingCandidateShare: p2c draws its two candidates by
// binary search of the cached prefix sums; with idle providers (equal
// scores, the first drawn wins), the share of a warming provider is that
// of its first draw, its weight's share: 25 / (25 + 100 + 100).
func TestT22_P2CWarmingCandidateShare(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return start.Add(150 * time.Second) } // 2.5 of 10 min: weight 25
	l := []spi.Invoker{
		spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?weight=100"), nil),
		spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.2:20880/demo.Echo?weight=100&warmup=10m&timestamp=%d", start.UnixMilli())), nil),
		spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.3:20880/demo.Echo?weight=100"), nil),
	}
	lb, err := p2c.New(warmup.WithClock(clock)).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	got := 0
	for range n {
		if lb.Select(l, nil) == l[1] {
			got++
		}
	}
	if share, want := float64(got)/n, 25.0/225; math.Abs(share-want) > 0.015 {
		t.Errorf("the warming provider's share %.3f, want %.3f", share, want)
	}
}

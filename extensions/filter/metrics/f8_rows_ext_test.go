package metrics_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// A row's recent_window_s is the window its recent_tps is over: a method
// first called 7.9 s ago has one call in 7.9 s, not in 10 (tester53
// finding 9: "recent_tps":0.1265,"recent_window_s":10).
func TestRecentWindowIsTheRatesWindow(t *testing.T) {
	var mu sync.Mutex
	start := time.Unix(1_700_000_000, 0)
	now := start
	set := func(at time.Time) { mu.Lock(); now = at; mu.Unlock() }
	reg := metrics.NewRegistry(metrics.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{} })
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	for _, c := range []struct {
		after  time.Duration
		window float64
	}{{300 * time.Millisecond, 1}, {7900 * time.Millisecond, 7.9}, {9 * time.Second, 9}} {
		set(start.Add(c.after))
		s, _ := reg.Lookup(spi.Provider, "s", "M")
		if math.Abs(s.RecentWindowSeconds-c.window) > 1e-3 || math.Abs(s.RecentTPS*s.RecentWindowSeconds-1) > 1e-6 {
			t.Errorf("%v after the only call: recent_tps %v over recent_window_s %v; want 1 call over %v s", c.after, s.RecentTPS, s.RecentWindowSeconds, c.window)
		}
	}
	// from 10 s on, the full window (the call's second counts for its
	// share inside it)
	set(start.Add(10500 * time.Millisecond))
	if s, _ := reg.Lookup(spi.Provider, "s", "M"); s.RecentWindowSeconds != 10 || s.RecentTPS > 0.1 {
		t.Errorf("10.5 s after the only call: recent_tps %v over recent_window_s %v; want at most 1 call over 10 s", s.RecentTPS, s.RecentWindowSeconds)
	}
	// a row with no completed call keeps the full window (not 0, which
	// marks a node older than recent_tps)
	f.(interface {
		Invoke(context.Context, spi.Invoker, *spi.Invocation) spi.Result
	}).Invoke(context.Background(), spi.InvokerFunc(func(ctx context.Context, _ *spi.Invocation) spi.Result {
		s, _ := reg.Lookup(spi.Provider, "s", "N")
		if s.InFlight != 1 || s.RecentWindowSeconds != 10 {
			t.Errorf("row in flight: %+v; want recent_window_s 10", s)
		}
		return spi.Result{}
	}), &spi.Invocation{Service: "s", Method: "N"})
}

// A row's max is its longest call, exact, and its p99 is never above it:
// a row of one call has max = p99 = mean (tester53 finding 9: "mean_ms
// 0.089679 p99_ms 0.089 max_ms 0.089", microseconds truncated).
func TestOneCallRowMaxIsItsMean(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	// durations that are no whole number of microseconds, on the
	// registry's own clock: several methods, so that one of them almost
	// surely has a fraction of a microsecond
	for i, d := range []time.Duration{89679 * time.Nanosecond, 1234567 * time.Nanosecond, 3*time.Millisecond + 999*time.Nanosecond} {
		method := string(rune('A' + i))
		f.Invoke(context.Background(), spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result {
			end := time.Now().Add(d)
			for time.Now().Before(end) { // spin: a sleep is at least a timer's slack
			}
			return spi.Result{}
		}), &spi.Invocation{Service: "s", Method: method})
		s, ok := reg.Lookup(spi.Provider, "s", method)
		if !ok || s.Count != 1 {
			t.Fatalf("row %s: %+v", method, s)
		}
		if s.MaxMillis != s.MeanMillis || s.P99Millis != s.MeanMillis {
			t.Errorf("one call of about %v: mean %v ms, p99 %v ms, max %v ms; want all three equal", d, s.MeanMillis, s.P99Millis, s.MaxMillis)
		}
	}
	// many calls: p99 within the histogram's precision, never above max,
	// max never below the mean
	for range 200 {
		f.Invoke(context.Background(), spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }),
			&spi.Invocation{Service: "s", Method: "Many"})
	}
	s, _ := reg.Lookup(spi.Provider, "s", "Many")
	if s.Count != 200 || s.MaxMillis < s.MeanMillis || s.P99Millis > s.MaxMillis || s.P99Millis <= 0 {
		t.Errorf("200 calls: %+v; want 0 < p99 <= max, mean <= max", s)
	}
}

package bench_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
)

// An open loop at 200 calls/s for 1 s starts the 200 calls intended
// before the deadline, on time; the report says so.
func TestOpenLoopKeepsItsRate(t *testing.T) {
	r, err := bench.Run(context.Background(), bench.Config{Duration: time.Second, Concurrency: 50, Rate: 200},
		func(ctx context.Context, w int) error { time.Sleep(time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	o := r.OpenLoop
	if o == nil || r.Calls != 200 || o.Rate.Asked != 200 || math.Abs(o.Rate.Reached-200) > 20 {
		t.Fatalf("report %+v, open loop %+v: want 200 calls at about 200/s", r, o)
	}
	if o.Rate.Callers < 1 || o.Rate.Callers > 50 || o.LateStarts != 0 {
		t.Fatalf("open loop %+v: want 1 to 50 callers (as the timers wake: calls they find due together take a caller each), none late", o)
	}
	b, _ := json.Marshal(r)
	for _, k := range []string{`"rate":{"asked":200,`, `"late_starts":0`, `"late_worst_us":0`, `"calls":200`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
}

// One caller for 50 ms calls at 40 calls/s: each call starts 25 ms
// later than the one before it was intended to, and the latency counts
// that wait (coordinated omission corrected): the tenth call's is about
// 9 × 25 + 50 ms, not 50 ms.
func TestOpenLoopCountsLatencyFromIntendedStart(t *testing.T) {
	r, err := bench.Run(context.Background(), bench.Config{Calls: 10, Concurrency: 1, Rate: 40},
		func(ctx context.Context, w int) error { time.Sleep(50 * time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	o := r.OpenLoop
	if r.Calls != 10 || o.LateStarts != 9 || o.Rate.Callers != 1 {
		t.Fatalf("report %+v, open loop %+v: want 10 calls, 9 of them late, 1 caller", r, o)
	}
	if r.MaxUS < 250_000 || o.LateWorstUS < 200_000 || o.LateWorstUS > r.MaxUS {
		t.Fatalf("max %.0f µs, worst lateness %.0f µs: want the last call's 275 ms counted from its intended start", r.MaxUS, o.LateWorstUS)
	}
	if o.Rate.Reached > 25 {
		t.Fatalf("reached %.1f/s: want about 20/s, what one caller of 50 ms calls makes", o.Rate.Reached)
	}
	// with callers enough, no call is late and latency is the call's
	// (bounds for a loaded machine: 1 s, where the late run's is 275 ms
	// and more)
	late := r.MaxUS
	r, err = bench.Run(context.Background(), bench.Config{Calls: 10, Concurrency: 1000, Rate: 40},
		func(ctx context.Context, w int) error { time.Sleep(50 * time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if r.OpenLoop.LateStarts != 0 || r.OpenLoop.Rate.Callers < 2 || r.P50US >= late || r.MaxUS > 1e6 {
		t.Fatalf("report %+v, open loop %+v: want no late start, latency about 50 ms", r, r.OpenLoop)
	}
}

// The warm-up runs at the same rate (its calls are spread, not made at
// once); its default with Rate is none.
func TestOpenLoopWarmup(t *testing.T) {
	var calls atomic.Int64
	start := time.Now()
	r, err := bench.Run(context.Background(), bench.Config{Calls: 2, Concurrency: 4, Rate: 20, Warmup: 4},
		func(ctx context.Context, w int) error { calls.Add(1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// warm-up slots at 0, 50, 100, 150 ms, measured at 0 and 50 ms after
	if el := time.Since(start); calls.Load() != 6 || r.Calls != 2 || el < 200*time.Millisecond {
		t.Fatalf("%d calls in %v, report %+v: want 4 warm-up calls at 20/s, then 2", calls.Load(), el, r)
	}
	calls.Store(0)
	if _, err := bench.Run(context.Background(), bench.Config{Calls: 3, Concurrency: 4, Rate: 1000, Warmup: -1},
		func(ctx context.Context, w int) error { calls.Add(1); return nil }); err != nil || calls.Load() != 3 {
		t.Fatalf("%d calls, %v: want 3, no warm-up by default", calls.Load(), err)
	}
}

// A run whose context ends stops handing out calls at once, also with
// the next call 10 s away.
func TestOpenLoopStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := bench.Run(ctx, bench.Config{Calls: 5, Concurrency: 2, Rate: 0.1},
		func(ctx context.Context, w int) error { return nil })
	if err == nil || r.Calls != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("report %+v, %v after %v: want 1 call and the context's error at once", r, err, time.Since(start))
	}
}

func TestRateBounds(t *testing.T) {
	for _, rate := range []float64{-1, math.NaN(), math.Inf(1), 0.0001, 2e6} {
		err := bench.Config{Calls: 1, Concurrency: 1, Rate: rate}.Validate()
		if err == nil || !strings.Contains(err.Error(), "calls per second") {
			t.Errorf("rate %v: %v, want an error naming the bounds", rate, err)
		}
	}
	if err := (bench.Config{Calls: 1, Concurrency: 1, Rate: 0.1}).Validate(); err != nil {
		t.Errorf("rate 0.1: %v", err)
	}
}

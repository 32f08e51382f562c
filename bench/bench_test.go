package bench_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/bench"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errOdd = errors.New("odd")

// Counted run: every call is accounted for once, in the totals and in the
// timeline, and failures are classified.
func TestRunCountsEveryCall(t *testing.T) {
	var calls atomic.Int64
	var ticks atomic.Int64
	var final bool
	r, err := bench.Run(context.Background(), bench.Config{
		Calls: 5000, Concurrency: 16, Warmup: 100,
		Classify:  func(err error) string { return "ODD" },
		Tick:      func(p bench.Progress) { ticks.Add(1); final = p.Final },
		TickEvery: time.Millisecond,
	}, func(ctx context.Context, w int) error {
		if calls.Add(1)%2 == 1 {
			return errOdd
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 5100 || r.Calls != 5000 || r.OK+r.Errors["ODD"] != 5000 || len(r.Errors) != 1 {
		t.Fatalf("made %d calls, report %+v", calls.Load(), r)
	}
	var tl, te int64
	for i, s := range r.Timeline {
		if s.Second != i {
			t.Fatalf("timeline entry %d has second %d", i, s.Second)
		}
		tl += s.Calls
		te += s.Errors["ODD"]
	}
	if tl != r.Calls || te != r.Errors["ODD"] {
		t.Fatalf("timeline sums %d calls, %d errors; report %d, %d", tl, te, r.Calls, r.Errors["ODD"])
	}
	if !final || ticks.Load() < 1 {
		t.Fatalf("ticks %d, last final %v", ticks.Load(), final)
	}
	if r.CallsPerSec <= 0 || r.MaxUS < r.P50US || r.Providers == nil {
		t.Fatalf("report %+v", r)
	}
}

func TestRunDuration(t *testing.T) {
	start := time.Now()
	r, err := bench.Run(context.Background(), bench.Config{Duration: 1200 * time.Millisecond, Concurrency: 4, Warmup: 0},
		func(ctx context.Context, w int) error { time.Sleep(time.Millisecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 1200*time.Millisecond || el > 10*time.Second {
		t.Fatalf("took %v", el)
	}
	if len(r.Timeline) != 2 || r.Calls == 0 || r.Calls != r.OK || r.P50US < 1000 {
		t.Fatalf("report %+v", r)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r, err := bench.Run(ctx, bench.Config{Calls: 1 << 40, Concurrency: 3, Warmup: 0},
		func(ctx context.Context, w int) error { time.Sleep(time.Millisecond); return nil })
	if !errors.Is(err, context.DeadlineExceeded) || r == nil || r.Calls == 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
}

// Calls returning ErrUncounted (those the run's end cut short) are in no
// total, error count or timeline entry.
func TestRunLeavesUncountedCallsOut(t *testing.T) {
	var calls atomic.Int64
	r, err := bench.Run(context.Background(), bench.Config{Calls: 1000, Concurrency: 4, Warmup: 0},
		func(ctx context.Context, w int) error {
			switch calls.Add(1) % 3 {
			case 0:
				return fmt.Errorf("cut short: %w", bench.ErrUncounted)
			case 1:
				return errOdd
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var tl int64
	for _, s := range r.Timeline {
		tl += s.Calls
	}
	if r.Calls != 1000 || r.Calls != r.OK+r.Errors["ERROR"] || len(r.Errors) != 1 || tl != r.Calls || calls.Load() < 1400 {
		t.Fatalf("made %d calls, report %+v", calls.Load(), r)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []bench.Config{
		{Concurrency: 1},
		{Calls: -1, Concurrency: 1},
		{Calls: 1, Duration: time.Second, Concurrency: 1},
		{Calls: 1, Concurrency: 0},
	} {
		if _, err := bench.Run(context.Background(), c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// The baseline echo under concurrent callers, then after its server is
// gone: calls fail with ErrEchoClosed instead of hanging.
func TestEchoBaseline(t *testing.T) {
	srv, err := bench.StartEchoServer("127.0.0.1:0", 100)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl, err := bench.DialEcho(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := make([]byte, 1000)
	r, err := bench.Run(context.Background(), bench.Config{Calls: 20000, Concurrency: 64, Warmup: -1},
		func(ctx context.Context, w int) error { return cl.Call(req) })
	if err != nil || r.OK != 20000 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := cl.Call(req)
		if errors.Is(err, bench.ErrEchoClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call after server close: %v", err)
		}
	}
	cl.Close()
	if err := cl.Call(req); !errors.Is(err, bench.ErrEchoClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

// The warm-up of a duration run stops after a tenth of the duration however
// many calls Warmup asks for; a negative duration or warm-up bound is refused.
func TestRunWarmupBoundedByDuration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	r, err := bench.Run(ctx, bench.Config{Duration: 300 * time.Millisecond, Concurrency: 2, Warmup: 1 << 40},
		func(ctx context.Context, w int) error { time.Sleep(time.Millisecond); return nil })
	if el := time.Since(start); err != nil || el > 3*time.Second || r.Calls == 0 {
		t.Fatalf("Run took %v: %v, %+v", el, err, r)
	}
	for _, c := range []bench.Config{
		{Calls: 10, Duration: -time.Second, Concurrency: 1},
		{Calls: 10, WarmupMax: -time.Second, Concurrency: 1},
	} {
		if _, err := bench.Run(ctx, c, nil); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// tester86 #3: the report says when the measured phase began, as wall
// time in UTC to the millisecond (RFC 3339), after the warm-up (Config.
// Start runs right before it) and before the run returned, so that its
// timeline lines up with deploy and kill times.
func TestRunReportsWallClockStart(t *testing.T) {
	var measured time.Time
	var first atomic.Pointer[time.Time]
	r, err := bench.Run(context.Background(), bench.Config{
		Calls: 200, Concurrency: 2, Warmup: 50,
		Start: func() { measured = time.Now() },
	}, func(context.Context, int) error {
		if !measured.IsZero() && first.Load() == nil {
			now := time.Now()
			first.CompareAndSwap(nil, &now)
		}
		return nil
	})
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(r.Start) {
		t.Fatalf("Start = %q; want RFC 3339 in UTC with milliseconds, such as 2026-12-04T05:06:02.536Z", r.Start)
	}
	start, err := time.Parse(time.RFC3339Nano, r.Start)
	if err != nil {
		t.Fatalf("Start %q does not parse as RFC 3339: %v", r.Start, err)
	}
	if start.Before(measured.Truncate(time.Millisecond)) || start.After(*first.Load()) || start.After(end) {
		t.Errorf("Start = %v; want the measured phase's start: at or after the warm-up's end %v, by the first measured call %v, before Run returned %v",
			start, measured.UTC(), first.Load().UTC(), end.UTC())
	}
}

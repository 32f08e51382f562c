package bench

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A call that a free caller takes behind its intended time (the
// dispatcher's own lag, here a start 50 ms in the past) counts from when
// it was handed out, not from its intended time: the tool's lag is not
// the service's latency (tester103 #6: p50 ~1 ms at every rate). Only a
// call that waited for a caller counts from its intended time.
func TestOpenLoopCountsFromHandOutWhenCallerFree(t *testing.T) {
	var mu sync.Mutex
	var froms []time.Duration
	openLoop(context.Background(), time.Now().Add(-50*time.Millisecond), 1000, 5, 0, 100,
		func(ctx context.Context, w int, from time.Duration) {
			mu.Lock()
			froms = append(froms, from)
			mu.Unlock()
		})
	if len(froms) != 5 {
		t.Fatalf("%d calls, want 5", len(froms))
	}
	for i, f := range froms {
		if f < 50*time.Millisecond {
			t.Fatalf("call %d counts from %v: want from its hand-out, 50 ms or more after start (all from: %v)", i, f, froms)
		}
	}
	// one caller of 20 ms calls at 1000/s: the calls wait for it and
	// count from their intended times (0, 1, 2 ms)
	froms = nil
	st := openLoop(context.Background(), time.Now(), 1000, 3, 0, 1,
		func(ctx context.Context, w int, from time.Duration) {
			froms = append(froms, from)
			time.Sleep(20 * time.Millisecond)
		})
	if st.late != 2 || len(froms) != 3 || froms[1] != time.Millisecond || froms[2] != 2*time.Millisecond {
		t.Fatalf("late %d, from %v: want the 2 late calls counted from 1 ms and 2 ms", st.late, froms)
	}
}

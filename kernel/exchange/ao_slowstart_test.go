package exchange

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// startedSleeps is echoService counting the Sleep handlers started.
type startedSleeps struct {
	*echoService
	started atomic.Int64
}

func (s *startedSleeps) Serve(ctx context.Context, req *Request) spi.Result {
	if req.Method == "Sleep" {
		s.started.Add(1)
	}
	return s.echoService.Serve(ctx, req)
}

// A new connection's long calls, before its first answer, all start
// within a few of the slow start's waits (backpressure.go: firstAnswers,
// budgetEstimate, the Server's allocation look). With the Server's budget
// at its default, 256 Sleep calls on a fresh connection had 11 handlers
// started after 2 s and 33 after 5 s: each counted at payload in the
// budget for 2 s, about 10 at a time; then all within about 1.6 s (4
// times as many per unknownWait), and 50 parallel 1.5 s calls with a
// 1.8 s timeout on a fresh provider had 39 time out (tester81 #1): 50
// started after 0.5 s. Now, on an idle provider (the handlers allocate
// nothing), 50 within about 0.2 s and 256 within about 0.5 s
// (backpressure.go, quietWait), bounded here at 0.3 and 0.8 s.
func TestSlowStart_LongCallsOnANewConnectionAllStart(t *testing.T) {
	for _, n := range []struct {
		calls int
		bound time.Duration
	}{{DefaultWorkers, 800 * time.Millisecond}, {50, 300 * time.Millisecond}} {
		for _, c := range []struct{ mux, adaptive bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("calls=%d/mux=%v/adaptive=%v", n.calls, c.mux, c.adaptive), func(t *testing.T) {
				svc := &startedSleeps{echoService: &echoService{}}
				f := startServer(t, c.mux, func(o *Options) { o.Handler = svc; o.Adaptive = c.adaptive })
				ch := f.dial(nil)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				defer wg.Wait()
				defer cancel()
				start := time.Now()
				for range n.calls {
					wg.Go(func() { ch.Invoke(ctx, mpCodec{}, echoInv("Sleep", 1500), 20*time.Second) })
				}
				all := waitFor(5*time.Second, func() bool { return svc.started.Load() == int64(n.calls) })
				took := time.Since(start)
				if !all {
					t.Fatalf("%d of %d long calls on a new connection started within 5s", svc.started.Load(), n.calls)
				}
				if took > n.bound {
					t.Fatalf("%d long calls (1.5 s each, allocating nothing) on a new connection to an idle provider all started in %v; want within %v",
						n.calls, took.Round(time.Millisecond), n.bound)
				}
				t.Logf("all %d started in %v", n.calls, took.Round(time.Millisecond))
			})
		}
	}
}

// The allocation look's cost (backpressure.go: lookEvery): one read of the
// process's cumulative heap allocations (runtime/metrics), once per
// lookEvery per Server while handlers of answers not yet known are counted.
func BenchmarkHeapAllocsRead(b *testing.B) {
	for b.Loop() {
		heapAllocated()
	}
}

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
// budgetEstimate). With the Server's budget at its default, 256 Sleep
// calls on a fresh connection had 11 handlers started after 2 s and 33
// after 5 s: each counted at payload in the budget for 2 s, about 10 at
// a time. Now all within about 1.6 s.
func TestSlowStart_LongCallsOnANewConnectionAllStart(t *testing.T) {
	const calls = DefaultWorkers
	const bound = 3 * time.Second // about 1.6 s on an idle machine
	for _, c := range []struct{ mux, adaptive bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("mux=%v/adaptive=%v", c.mux, c.adaptive), func(t *testing.T) {
			svc := &startedSleeps{echoService: &echoService{}}
			f := startServer(t, c.mux, func(o *Options) { o.Handler = svc; o.Adaptive = c.adaptive })
			ch := f.dial(nil)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			start := time.Now()
			for range calls {
				wg.Go(func() { ch.Invoke(ctx, mpCodec{}, echoInv("Sleep", 8000), 20*time.Second) })
			}
			all := waitFor(bound, func() bool { return svc.started.Load() == calls })
			took := time.Since(start)
			if !all {
				t.Fatalf("%d of %d long calls on a new connection started within %v", svc.started.Load(), calls, bound)
			}
			t.Logf("all %d started in %v", calls, took.Round(time.Millisecond))
		})
	}
}

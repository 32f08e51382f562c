package exchange_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// Callers of large answers are served about in the order they called
// (tester101): with 32 callers of 4 MiB answers in a closed loop, the
// provider runs about two at a time (highWater) and parks the others.
// The parked requests were put back all at once each time an answer
// drained, raced for the room of one or two, and the losers parked again
// behind the winners and behind requests read later: a call's wait was a
// lottery (median 0.2-0.4 s, the slowest 3-6 s in a 5-6 s run, a request
// parked 30 times). Here 32 callers make 6 calls each for 4 MiB answers,
// their first call unmeasured (the channel's slow start, before its
// answers' size is known); no measured call may take more than 8 times
// the median (served in order: about 1.5-2.5 times; before: 10-30 times).
func TestLargeAnswers_CallersServedInTurn(t *testing.T) {
	const (
		callers = 32
		calls   = 6
		answer  = 4 << 20
		bound   = 8 // times the median
	)
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			_, ch := serve(t, tr)
			var (
				mu    sync.Mutex
				took  []time.Duration
				wg    sync.WaitGroup
				errs  = make(chan error, callers)
				start = make(chan struct{})
			)
			for range callers {
				wg.Go(func() {
					<-start
					for i := range calls {
						began := time.Now()
						res := ch.Invoke(context.Background(), msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{answer}}, time.Minute)
						d := time.Since(began)
						if res.Err != nil {
							errs <- fmt.Errorf("call %d: %w", i, res.Err)
							return
						}
						if b, _ := res.Value.([]byte); len(b) != answer {
							errs <- fmt.Errorf("call %d: answer of %d bytes, want %d", i, len(b), answer)
							return
						}
						if i > 0 {
							mu.Lock()
							took = append(took, d)
							mu.Unlock()
						}
					}
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			slices.Sort(took)
			median, slowest := took[len(took)/2], took[len(took)-1]
			t.Logf("%d calls of %d MiB answers by %d callers: median %v, p90 %v, slowest %v",
				len(took), answer>>20, callers, median.Round(time.Millisecond), took[len(took)*9/10].Round(time.Millisecond), slowest.Round(time.Millisecond))
			if slowest > bound*median {
				t.Errorf("the slowest call took %v, over %d times the median %v: callers of large answers are not served in turn", slowest, bound, median)
			}
		})
	}
}

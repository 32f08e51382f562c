package exchange

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/stacks"
	"github.com/airnode/airnode/spi"
)

// stuckHandler answers "Hold" with stuck true only when release is closed,
// ignoring its context (a method that never looks at it); with stuck false
// at once.
type stuckHandler struct{ release chan struct{} }

func (h *stuckHandler) Serve(_ context.Context, req *Request) spi.Result {
	var stuck bool
	if err := req.Args.Decode(&stuck); err != nil {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument: %v", err)}
	}
	if stuck {
		<-h.release
	}
	return spi.Result{Value: stuck}
}

// ownIdleWorkers counts worker goroutines not running stuckHandler.
func ownIdleWorkers() int {
	return stacks.Count("exchange.(*workerPool).worker(", "(*stuckHandler).Serve(")
}

// A provider channel made without a Server runs its handlers on a pool of
// its own. When it dies while handlers that ignore their context hold
// workers, the idle workers end at once, not at the pool's reaper ticks
// (2 to 4 s) nor when the stuck handlers return (fix-ca left this path
// untested; the Server's is kernel TestCa_ShutdownStopsIdleWorkersAtOnce).
func TestOwnPoolIdleWorkersEndWhenTheChannelDies(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &stuckHandler{release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
	}()
	a, b := net.Pipe()
	p := NewChannel(newConnSession(a, true), Options{Side: spi.Provider, Codec: codecByID, Handler: h, Logger: quiet})
	if !p.ownPool {
		t.Fatal("a channel made without a Server has no pool of its own: the test proves nothing")
	}
	c := NewChannel(newConnSession(b, false), Options{Side: spi.Consumer, Codec: codecByID, Logger: quiet})
	defer c.Wait()
	defer c.Close("test done")

	var wg sync.WaitGroup
	answered := make(chan struct{}, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inv := &spi.Invocation{Service: "t.Holder", Method: "Hold", Args: []any{i%4 == 0}} // 5 stuck
			if res := c.Invoke(context.Background(), mpCodec{}, inv, 20*time.Second); res.Err == nil {
				answered <- struct{}{}
			}
		}()
	}
	for range 15 {
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			t.Fatal("the 15 calls that do not hold were not answered in 10 s")
		}
	}
	if !waitFor(2*time.Second, func() bool { return ownIdleWorkers() > 0 }) {
		t.Fatal("no idle worker after 15 answers: the test proves nothing")
	}
	t0 := time.Now()
	p.Close("test: the provider channel dies")
	// at once: within 500 ms, the reaper's first tick being 2 s after the
	// first call and the stuck handlers never returning meanwhile
	if !waitFor(500*time.Millisecond, func() bool { return ownIdleWorkers() == 0 }) {
		t.Errorf("%d idle workers still running %v after the channel died; want none (only the 5 stuck handlers' goroutines)",
			ownIdleWorkers(), time.Since(t0).Round(time.Millisecond))
	}
	close(h.release) // the stuck handlers return; their workers end (goleak in TestMain)
	released = true
	p.Wait()
	wg.Wait()
}

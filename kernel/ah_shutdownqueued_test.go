package kernel

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// ahQueued is aeSlow with a second method, Queued, which counts its
// starts and fails with its context's cause once that has ended.
type ahQueued struct {
	aeSlow
	queued *atomic.Int32
}

func (s ahQueued) Queued(ctx context.Context) (string, error) {
	s.queued.Add(1)
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	return "ran", nil
}

// A request the provider read before its go-away but still queued for a
// worker when the shutdown timeout abandons the running calls is not
// run: it is answered as a request read after the go-away is (the
// exchange's not-run answer), which its consumer fails as never run
// (spi.ErrGoAway: safe to retry, also for a non-idempotent method), and
// it is neither counted nor named as abandoned. Before, it started the
// method with its context already cancelled and was answered, counted
// and named as a call "abandoned while running".
//
// The queue is the exchange's worker pool (dispatcher=all): every one of
// its exchange.DefaultWorkers workers runs a Slow call, and Queued waits
// behind them. The connection has answered nothing yet: the exchange's
// slow start (backpressure.go: firstAnswers, budgetEstimate) starts the
// Slow calls within about 1.6 s.
func TestAHShutdownDoesNotRunARequestQueuedWhenItAbandonsCalls(t *testing.T) {
	svc := ahQueued{aeSlow: newAESlow("a", false), queued: new(atomic.Int32)}
	p, e := aeExport(t, svc, 500*time.Millisecond, "?transport=tcp&dispatcher=all")
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/ae.S?transport=tcp&timeout=10s&cluster=failfast")
	slow := make(chan error, exchange.DefaultWorkers)
	for range exchange.DefaultWorkers {
		go func() {
			var s string
			slow <- r.Call(ctxT(t), "Slow", []any{8000}, &s)
		}()
	}
	eventually(t, "every worker running a Slow call", func() bool { return svc.started.Load() == exchange.DefaultWorkers })
	queued := make(chan error, 1)
	go func() {
		var s string
		queued <- r.Call(ctxT(t), "Queued", nil, &s)
	}()
	eventually(t, "the Queued request read and queued", func() bool { return e.srv.srv.InFlight() == exchange.DefaultWorkers+1 })
	serr := p.Shutdown(ctxT(t))
	var err error
	select {
	case err = <-queued:
	case <-time.After(8 * time.Second):
		t.Fatal("the queued call did not end within 8s of the provider's shutdown")
	}
	for range exchange.DefaultWorkers {
		select {
		case err := <-slow:
			if !errors.Is(err, spi.ErrProviderShutdown) {
				t.Errorf("Slow call = %v; want abandoned (spi.ErrProviderShutdown)", err)
			}
		case <-time.After(8 * time.Second):
			t.Fatal("a Slow call did not end within 8s of the provider's shutdown")
		}
	}
	if n := svc.queued.Load(); n != 0 {
		t.Errorf("Queued started %d times; want never: it was still queued when the running calls were abandoned", n)
	}
	if !errors.Is(err, spi.ErrGoAway) || errors.Is(err, spi.ErrRequestSent) {
		t.Errorf("Queued call = %v; want the go-away's not-run error (spi.ErrGoAway, not spi.ErrRequestSent)", err)
	}
	var ab *AbandonedError
	if !errors.As(serr, &ab) || ab.Calls != exchange.DefaultWorkers {
		t.Errorf("Shutdown = %v; want an AbandonedError counting the %d running calls", serr, exchange.DefaultWorkers)
	} else {
		// one consumer's calls of one method: one entry counting them
		// all (tester86 #3), though a server names at most 8 entries
		if len(ab.Which) != 1 || ab.Which[0].Count != exchange.DefaultWorkers {
			t.Errorf("abandoned calls named %v; want one entry, ae.S.Slow from the consumer, counting its %d calls", ab.Which, exchange.DefaultWorkers)
		}
		for _, w := range ab.Which {
			if !strings.HasPrefix(w.Call, "ae.S.Slow") {
				t.Errorf("abandoned calls named %q; want only the running Slow calls", ab.Which)
				break
			}
		}
	}
	t.Logf("queued call: %v; shutdown: %v", err, serr)
}

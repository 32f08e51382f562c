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

// bbStuck is a service whose Stuck ignores its context: it returns only
// once release is closed. Queued counts its starts.
type bbStuck struct {
	started *atomic.Int32
	queued  *atomic.Int32
	release chan struct{}
}

func (s bbStuck) Stuck(ctx context.Context) (string, error) {
	s.started.Add(1)
	<-s.release
	return "stuck", nil
}

func (s bbStuck) Queued(ctx context.Context) (string, error) {
	s.queued.Add(1)
	return "ran", nil
}

// A request queued for a worker behind calls that ignore their cancelled
// context, with a timeout long enough that the worker pool does not
// refuse it (a tenth of 60s), never starts: no worker frees up before
// the provider's shutdown closes its channels. It is answered as not run
// (the exchange's not-run answer behind the go-away: spi.ErrGoAway at
// the consumer), and the AbandonedError counts only the calls that ran.
// Before, it was counted abandoned (the in-flight count at the go-away
// included it), and its consumer saw its connection close under it.
func TestBBShutdownCountsAndAnswersARequestNoWorkerEverTook(t *testing.T) {
	svc := bbStuck{started: new(atomic.Int32), queued: new(atomic.Int32), release: make(chan struct{})}
	defer close(svc.release) // after the node's cleanup (t.Cleanup runs later): the handlers end with the test
	p, e := aeExport(t, svc, 300*time.Millisecond, "?transport=tcp&dispatcher=all")
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/ae.S?transport=tcp&timeout=60s&cluster=failfast")
	stuck := make(chan error, exchange.DefaultWorkers)
	for range exchange.DefaultWorkers {
		go func() {
			var s string
			stuck <- r.Call(ctxT(t), "Stuck", nil, &s)
		}()
	}
	eventually(t, "every worker running a Stuck call", func() bool { return svc.started.Load() == exchange.DefaultWorkers })
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
	if n := svc.queued.Load(); n != 0 {
		t.Errorf("Queued started %d times; want never", n)
	}
	if !errors.Is(err, spi.ErrGoAway) || errors.Is(err, spi.ErrRequestSent) {
		t.Errorf("Queued call = %v; want the go-away's not-run error (spi.ErrGoAway, not spi.ErrRequestSent)", err)
	}
	var ab *AbandonedError
	if !errors.As(serr, &ab) || ab.Calls != exchange.DefaultWorkers {
		t.Errorf("Shutdown = %v; want an AbandonedError counting the %d running calls", serr, exchange.DefaultWorkers)
	} else {
		for _, w := range ab.Which {
			if w.Call != "ae.S.Stuck" && !strings.HasPrefix(w.Call, "ae.S.Stuck from ") {
				t.Errorf("abandoned calls named %q; want only running Stuck calls", ab.Which)
				break
			}
		}
	}
	if n := e.srv.srv.NotStarted(); n != 1 {
		t.Errorf("exchange NotStarted = %d after shutdown; want 1 (the Queued request)", n)
	}
	t.Logf("queued call: %v; shutdown: %v", err, serr)
}

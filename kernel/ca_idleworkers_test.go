package kernel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/stacks"
	"github.com/airnode/airnode/spi"
)

// holder's Hold ignores its context: with stuck true it returns only when
// release is closed; else after 100 ms.
type holder struct {
	release chan struct{}
}

func (h *holder) Hold(ctx context.Context, stuck bool) (bool, error) {
	if stuck {
		<-h.release
	} else {
		time.Sleep(100 * time.Millisecond)
	}
	return stuck, nil
}

// idleWorkers counts the provider worker goroutines not running a
// handler (exchange's workerPool.worker with no holder.Hold on its stack).
func idleWorkers() int { return stacks.Count("exchange.(*workerPool).worker(", "(*holder).Hold(") }

// TestCa_ShutdownStopsIdleWorkersAtOnce (tester91 #3): a Shutdown that
// abandons calls whose method ignores its context leaves behind only the
// goroutines running them, as its doc says goleak sees: the workers that
// finished the other calls and went idle end at once, not 2 to 4 s later
// at the worker pool's reaper ticks (14 idle workers remained for ~4 s).
func TestCa_ShutdownStopsIdleWorkersAtOnce(t *testing.T) {
	h := &holder{release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
	}()
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithShutdownTimeout(300*time.Millisecond))
	defer p.Close()
	e, err := p.Export(ctxT(t), h, spi.MustParse("airnode://127.0.0.1:0/t91.Holder"))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t91.Holder?timeout=20s")
	if !r.WaitReady(ctxT(t)) {
		t.Fatal("no provider connected")
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = r.Invoke(context.Background(), "Hold", i%4 == 0) // 5 stuck
		}()
	}
	time.Sleep(300 * time.Millisecond) // the 15 others answered: their workers idle
	if n := idleWorkers(); n == 0 {
		t.Fatal("no idle worker before Shutdown: the test proves nothing")
	}
	t0 := time.Now()
	err = p.Shutdown(context.Background())
	var ae *AbandonedError
	if !errors.As(err, &ae) || ae.Calls != 5 {
		t.Fatalf("Shutdown = %v; want an AbandonedError of the 5 stuck calls", err)
	}
	took := time.Since(t0)
	// at once: within 500 ms of Shutdown's return, the reaper's first
	// tick being 2 s after the first call
	deadline := time.Now().Add(500 * time.Millisecond)
	n := idleWorkers()
	for n > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n = idleWorkers()
	}
	if n > 0 {
		t.Errorf("%d idle workers still running %v after Shutdown returned; want none (only the 5 stuck methods' goroutines)", n, time.Since(t0)-took)
	}
	t.Logf("Shutdown returned after %v; idle workers then: %d", took.Round(time.Millisecond), n)
	close(h.release) // the stuck methods return; their workers end (goleak in TestMain)
	released = true
	wg.Wait()
}

package failover_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBackoffBounds(t *testing.T) {
	for k, b := range map[int]time.Duration{
		1: 20 * time.Millisecond, 2: 40 * time.Millisecond, 3: 80 * time.Millisecond,
		4: 160 * time.Millisecond, 5: 200 * time.Millisecond, 60: 200 * time.Millisecond, 0: 200 * time.Millisecond,
	} {
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range 2000 {
			d := failover.Backoff(k)
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo < b/2 || hi > b || hi-lo < b/4 {
			t.Errorf("Backoff(%d) over 2,000 draws in [%v, %v], want spread over [%v, %v]", k, lo, hi, b/2, b)
		}
	}
}

// deadlineCutNote is the note of a call whose retries stopped because
// the next backoff would outlast its deadline.
var deadlineCutNote = regexp.MustCompile(`; the caller's deadline stopped the retries: the \d+ms it left was less than the \d+ms backoff due after a full pool before attempt \d of 6 \(retries=5\)`)

var busyErr = spi.Errorf(spi.StatusServerThreadpoolExhausted, "threadlimit: 2 calls running")

// One provider whose pool is full, then drains: the retries ask it again
// after a backoff and the call succeeds.
func TestFullPoolAskedAgainAfterBackoff(t *testing.T) {
	var n int
	drains := func(context.Context, *spi.Invocation) spi.Result {
		if n++; n < 3 {
			return spi.Result{Err: busyErr}
		}
		return spi.Result{Value: "ok"}
	}
	c, dir, ps := setup(t, "?retries=3", drains)
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); r.Err != nil || r.Value != "ok" {
		t.Fatalf("got %+v, want the third attempt's success", r)
	}
	if got := ps[0].Calls(); got != 3 {
		t.Fatalf("%d attempts, want 3", got)
	}
}

// Untried providers come first, without waiting; a provider that
// answered SERVICE_NOT_FOUND is never asked again, even when the last
// failure was a full pool; retries=0 makes one attempt.
func TestFullPoolRetryOrder(t *testing.T) {
	notFound := spi.Errorf(spi.StatusServiceNotFound, "not here")
	c, dir, ps := setup(t, "?retries=4", fails(notFound), fails(busyErr))
	r := c.Invoke(context.Background(), echo(), dir, firstLB{})
	if got := fmt.Sprint(calls(ps)); got != "[1 4]" {
		t.Fatalf("calls %s, want [1 4]: the full one asked again, the one without the service never", got)
	}
	if spi.StatusOf(r.Err) != spi.StatusServerThreadpoolExhausted {
		t.Fatalf("status %v, want SERVER_THREADPOOL_EXHAUSTED", spi.StatusOf(r.Err))
	}
	c, dir, ps = setup(t, "?retries=0", fails(busyErr))
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); r.Err != busyErr || ps[0].Calls() != 1 {
		t.Fatalf("retries=0: %v after %d attempts, want the provider's error after 1", r.Err, ps[0].Calls())
	}
}

// A backoff that would outlast the call's deadline is not begun: the call
// ends with the provider's answer, not the context's error.
func TestFullPoolBackoffNeverPastDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond) // < the first wait, 10 ms
	defer cancel()
	c, dir, ps := setup(t, "?retries=5", fails(busyErr))
	r := c.Invoke(ctx, echo(), dir, firstLB{})
	if spi.StatusOf(r.Err) != spi.StatusServerThreadpoolExhausted || errors.Is(r.Err, context.DeadlineExceeded) || ps[0].Calls() != 1 {
		t.Fatalf("got %v after %d attempts, want SERVER_THREADPOOL_EXHAUSTED after 1", r.Err, ps[0].Calls())
	}
	// ... and says that the deadline, not the retries, ran out (tester91 #1).
	if !errors.Is(r.Err, busyErr) || !deadlineCutNote.MatchString(r.Err.Error()) || !strings.Contains(r.Err.Error(), "before attempt 2 of 6 (retries=5)") {
		t.Fatalf("got %q, want the provider's error and %q", r.Err, "the caller's deadline stopped the retries: the Nms it left was less than the Nms backoff due after a full pool before attempt 2 of 6 (retries=5)")
	}
	// A context already done stops the retries before any wait.
	ctx2, cancel2 := context.WithCancel(context.Background())
	c, dir, ps = setup(t, "?retries=5", func(context.Context, *spi.Invocation) spi.Result {
		cancel2()
		return spi.Result{Err: busyErr}
	})
	if r := c.Invoke(ctx2, echo(), dir, firstLB{}); spi.StatusOf(r.Err) != spi.StatusServerThreadpoolExhausted || ps[0].Calls() != 1 || strings.Contains(r.Err.Error(), "stopped the retries") {
		t.Fatalf("cancelled: %v after %d attempts, want 1, the provider's error as it is", r.Err, ps[0].Calls())
	}
}

// worker is a provider's service whose Work waits on gate (when set) or
// sleeps delay.
type worker struct {
	delay time.Duration
	gate  chan struct{}
}

func (w *worker) Work(ctx context.Context) (int, error) {
	var wait <-chan time.Time
	if w.gate == nil {
		wait = time.After(w.delay)
	}
	select {
	case <-w.gate:
	case <-wait:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return 1, nil
}

// provider exports w with threads=2 on loopback TCP and returns a
// consumer's reference to it with query.
func provider(t *testing.T, ctx context.Context, w *worker, query string) *kernel.Reference {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := bundle.Catalogs()
	reg := spi.MustParse("memory://" + t.Name())
	p := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	t.Cleanup(func() { p.Close() })
	if _, err := p.Export(ctx, w, spi.MustParse("airnode://127.0.0.1:0/t.Worker?transport=tcp&threads=2")); err != nil {
		t.Fatal(err)
	}
	cons := kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { cons.Close() })
	ref, err := cons.Refer(ctx, spi.MustParse("airnode:///t.Worker?"+query), reg)
	if err != nil {
		t.Fatal(err)
	}
	for len(ref.Providers()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the provider never showed up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return ref
}

// A burst over one provider's pool: threads=2, a method of 50 ms, 8
// concurrent calls. With retries=5 the refused ones are asked again after
// a backoff and all 8 succeed (they failed SERVER_THREADPOOL_EXHAUSTED
// before, retries unused); with retries=0 the 6 refused calls fail at once,
// while the 2 admitted ones are still running.
func TestBurstOverThreadPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	ref := provider(t, ctx, &worker{delay: 50 * time.Millisecond}, "retries=5&timeout=5s")
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := ref.Invoke(ctx, "Work")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("retries=5: %v", err)
		}
	}

	gate := make(chan struct{})
	ref0 := provider(t, ctx, &worker{gate: gate}, "retries=0&timeout=5s")
	results := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := ref0.Invoke(ctx, "Work")
			results <- err
		})
	}
	defer wg.Wait()
	for i := range 6 { // the gate is shut: only refusals can come back
		select {
		case err := <-results:
			if spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted {
				t.Fatalf("retries=0: result %d while 2 calls hold the pool: %v, want SERVER_THREADPOOL_EXHAUSTED", i+1, err)
			}
		case <-ctx.Done():
			close(gate)
			t.Fatalf("retries=0: %d of 6 refusals came back before the gate opened", i)
		}
	}
	close(gate)
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("retries=0: an admitted call failed: %v", err)
		}
	}
}

// tester91 #1: a burst over threads=2 with retries=5 and a caller's
// deadline of 150ms. The 2 admitted calls time out at that deadline
// (SERVER_TIMEOUT, matching context.DeadlineExceeded); the refused ones
// end before it, once the next backoff no longer fits, with the full
// pool's status and a message saying the deadline stopped the retries,
// how many of the 6 attempts were made, what was left and what the
// backoff would have been. Before, they ended "failed after 4 attempts"
// with no word of the deadline.
func TestBurstRetriesStoppedByTheCallersDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gate := make(chan struct{})
	defer close(gate)
	ref := provider(t, ctx, &worker{gate: gate}, "retries=5&timeout=5s")
	const calls = 8
	type outcome struct {
		err  error
		took time.Duration
	}
	results := make(chan outcome, calls)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range calls {
		wg.Go(func() {
			c, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			defer cancel()
			t0 := time.Now()
			_, err := ref.Invoke(c, "Work")
			results <- outcome{err, time.Since(t0)}
		})
	}
	var timedOut, cut int
	for range calls {
		o := <-results
		switch spi.StatusOf(o.err) {
		case spi.StatusServerTimeout:
			timedOut++
			if !errors.Is(o.err, context.DeadlineExceeded) {
				t.Errorf("an admitted call, after %v: %v, want it to match context.DeadlineExceeded", o.took, o.err)
			}
		case spi.StatusServerThreadpoolExhausted:
			cut++
			if errors.Is(o.err, context.DeadlineExceeded) || !deadlineCutNote.MatchString(o.err.Error()) {
				t.Errorf("a refused call, after %v: %q, want the full pool's status saying the caller's deadline stopped its retries", o.took, o.err)
			}
			if o.took >= 150*time.Millisecond {
				t.Errorf("a refused call ended after %v, want before its deadline of 150ms (the backoff that would outlast it is not begun)", o.took)
			}
		default:
			t.Errorf("after %v: %v, want SERVER_TIMEOUT or SERVER_THREADPOOL_EXHAUSTED", o.took, o.err)
		}
	}
	if timedOut != 2 || cut != calls-2 {
		t.Fatalf("%d SERVER_TIMEOUT and %d SERVER_THREADPOOL_EXHAUSTED, want 2 (the pool's threads) and %d", timedOut, cut, calls-2)
	}
}

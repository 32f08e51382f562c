package exchange

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// A request queued for a worker runs if a worker takes it within a tenth
// of its timeout, and is otherwise refused unrun with
// SERVER_THREADPOOL_EXHAUSTED: with the one worker held 400 ms, a queued
// call with a 10 s timeout (bound 1 s) runs, one with a 1 s timeout
// (bound 100 ms) does not, and says why, before its timeout. (With
// dispatcher=adaptive which calls reach the pool depends on timing: the
// overload test below covers it.)
func TestWorkerPool_QueueWaitIsATenthOfTheTimeout(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(transportName(mux), func(t *testing.T) {
			h := &countingHandler{svc: &echoService{}}
			f := startServer(t, mux, func(o *Options) { o.Workers, o.Handler = 1, h })
			ch, other := f.dial(nil), f.dial(nil)
			held := make(chan error, 1)
			go func() {
				held <- other.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 400), 10*time.Second).Err
			}()
			if !waitFor(5*time.Second, func() bool { return h.running.Load() == 1 }) {
				t.Fatal("the Sleep holding the worker did not start")
			}
			before := counters.Access.WorkersRejections.Load()
			long := make(chan spi.Result, 1)
			short := make(chan spi.Result, 1)
			go func() { long <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "long"), 10*time.Second) }()
			if !waitFor(5*time.Second, func() bool { return f.srv.pool.queuedLen() == 1 }) {
				t.Fatal("the call with a 10 s timeout was not queued")
			}
			start := time.Now()
			go func() { short <- other.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "short"), time.Second) }()
			r := recvWithin(t, short, 5*time.Second, "the call with a 1 s timeout")
			e := wantStatus(t, r.Err, spi.StatusServerThreadpoolExhausted)
			if !strings.Contains(e.Error(), "demo.Echo.Echo") || !strings.Contains(e.Error(), "over a tenth of") {
				t.Errorf("refusal does not say what and why: %v", e)
			}
			if d := time.Since(start); d > 900*time.Millisecond {
				t.Errorf("refused after %v: not before its timeout", d)
			}
			if r := recvWithin(t, long, 5*time.Second, "the call with a 10 s timeout"); r.Err != nil || r.Value != "long" {
				t.Fatalf("queued call with a 10 s timeout: %v %v", r.Value, r.Err)
			}
			if err := recvWithin(t, held, 5*time.Second, "the held call"); err != nil {
				t.Fatalf("held call: %v", err)
			}
			if n := counters.Access.WorkersRejections.Load() - before; n < 1 {
				t.Errorf("WorkersRejections grew by %d", n)
			}
			if f.logs.find("refusing requests") == "" {
				t.Error("no Warn line about the refusals")
			}
		})
	}
}

// Overload degrades gracefully: 3 × the pool's workers calling a 200 ms
// method in a closed loop, with a 2 s timeout, keep the workers busy with
// calls that succeed (at least half the pool's capacity over the run),
// and every other call fails SERVER_THREADPOOL_EXHAUSTED, unrun, well
// before its timeout (0.7 of it); none times out. Before, the queue grew
// until the calls that ran had waited most of their timeout. (Scaled up
// from 100 ms / 1 s / 2 s runs, same ratios: a loaded machine's
// scheduling delays of tens of ms weigh half as much.)
func TestWorkerPool_OverloadFailsFastAndKeepsGoodput(t *testing.T) {
	for _, adaptive := range []bool{false, true} {
		t.Run(map[bool]string{false: "all", true: "adaptive"}[adaptive], func(t *testing.T) {
			const (
				workers = 8
				callers = 3 * workers
				sleep   = 200 // ms
				timeout = 2 * time.Second
				run     = 4 * time.Second
			)
			f := startServer(t, false, func(o *Options) { o.Workers, o.Adaptive = workers, adaptive })
			ch := f.dial(nil)
			var ok, refused atomic.Int64
			var slowest atomic.Int64 // longest refusal, ns
			var mu sync.Mutex
			var other []error
			deadline := time.Now().Add(run)
			var wg sync.WaitGroup
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(deadline) {
						start := time.Now()
						err := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", sleep), timeout).Err
						var e *spi.Error
						switch {
						case err == nil:
							ok.Add(1)
						case errors.As(err, &e) && e.Status == spi.StatusServerThreadpoolExhausted:
							refused.Add(1)
							d := int64(time.Since(start))
							for s := slowest.Load(); d > s && !slowest.CompareAndSwap(s, d); s = slowest.Load() {
							}
							time.Sleep(5 * time.Millisecond) // a consumer's backoff
						default:
							mu.Lock()
							other = append(other, err)
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			// Adaptive runs a handed-off call on its reader, beyond the pool.
			capacity := int64(workers) * int64(run/time.Millisecond) / sleep
			t.Logf("ok=%d refused=%d other=%d (capacity %d); slowest refusal %v", ok.Load(), refused.Load(), len(other), capacity, time.Duration(slowest.Load()))
			if ok.Load() < capacity/2 {
				t.Errorf("%d calls succeeded, want at least half the capacity of %d", ok.Load(), capacity)
			}
			if refused.Load() == 0 {
				t.Error("no call was refused at 3 × the workers")
			}
			if len(other) > 0 {
				t.Errorf("%d calls failed otherwise, the first: %v", len(other), other[0])
			}
			if d := time.Duration(slowest.Load()); d > timeout*7/10 {
				t.Errorf("a refusal took %v: not fast", d)
			}
		})
	}
}

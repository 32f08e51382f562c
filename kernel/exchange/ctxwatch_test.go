package exchange

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// echoes makes n Echo calls on ch with ctx, one after the other, and fails
// the test on any error.
func echoes(t *testing.T, ch *Channel, ctx context.Context, n int) {
	t.Helper()
	for i := range n {
		if res := ch.Invoke(ctx, mpCodec{}, echoInv("Echo", i), 10*time.Second); res.Err != nil {
			t.Fatalf("call %d: %v", i, res.Err)
		}
	}
}

// A long-lived context shared by many calls gets watched: cancelling it
// ends every call waiting on it at once, CLIENT_ERROR naming the cause,
// each followed by a cancel event the provider acts on, and the watcher
// goes; the channel keeps working.
func TestCtxWatch_LongLivedContextIsWatchedAndCancelsItsCalls(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(fmt.Sprintf("mux=%v", mux), func(t *testing.T) {
			f := startServer(t, mux, nil)
			f.svc.canceled = make(chan time.Time, 64)
			ch := f.dial(nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			echoes(t, ch, ctx, sampleEvery*promoteAfter)
			if ch.watch.watching(ctx.Done()) == nil {
				t.Fatalf("after %d calls with one context it is not watched", sampleEvery*promoteAfter)
			}

			const n = 20
			errs := make(chan error, n)
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() { errs <- ch.Invoke(ctx, mpCodec{}, echoInv("Block"), 30*time.Second).Err })
			}
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == n }) { // all running, none to drop unrun
				t.Fatalf("%d calls running on the provider, want %d", f.srv.InFlight(), n)
			}
			began := time.Now()
			cancel()
			wg.Wait()
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("the calls ended %v after the cancel", took)
			}
			close(errs)
			for err := range errs {
				e := wantStatus(t, err, spi.StatusClientError)
				if !errors.Is(e, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled as its cause", err)
				}
			}
			for i := range n { // the provider's handlers saw the cancel events
				select {
				case <-f.svc.canceled:
				case <-time.After(5 * time.Second):
					t.Fatalf("%d of %d provider handlers cancelled", i, n)
				}
			}
			if !waitFor(5*time.Second, func() bool { return ch.watch.watching(ctx.Done()) == nil }) {
				t.Error("the watcher of a cancelled context is still there")
			}
			if ch.Pending() != 0 {
				t.Errorf("%d calls left pending", ch.Pending())
			}
			echoes(t, ch, context.Background(), 3)
		})
	}
}

// Contexts used by a call or two each (per request) are never watched.
func TestCtxWatch_PerCallContextsAreNotWatched(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	for range 4 * sampleEvery * promoteAfter {
		ctx, cancel := context.WithCancel(context.Background())
		echoes(t, ch, ctx, 1)
		cancel()
	}
	for i := range ch.watch.slots {
		if x := ch.watch.slots[i].Load(); x != nil {
			t.Errorf("slot %d watches a context", i)
		}
	}
}

// A context done between the call's look-up of its watcher and its wait
// is noticed by the call itself: calls racing the cancel all end.
func TestCtxWatch_CancelRacingCallsEndsThemAll(t *testing.T) {
	f := startServer(t, true, nil)
	ch := f.dial(nil)
	for round := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		echoes(t, ch, ctx, sampleEvery*promoteAfter)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				for ctx.Err() == nil {
					res := ch.Invoke(ctx, mpCodec{}, echoInv("Block"), 20*time.Second)
					if res.Err != nil && spi.StatusOf(res.Err) != spi.StatusClientError {
						t.Errorf("round %d: %v", round, res.Err)
						return
					}
				}
			})
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: calls still waiting 10 s after their context was cancelled (%d pending)", round, ch.Pending())
		}
	}
}

// The channel's death ends its watchers with it (goleak in TestMain checks
// that none is left).
func TestCtxWatch_WatcherEndsWithTheChannel(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	echoes(t, ch, ctx, sampleEvery*promoteAfter)
	if ch.watch.watching(ctx.Done()) == nil {
		t.Fatal("not watched")
	}
	ch.Close("test")
	ch.Wait()
	if ch.watch.watching(ctx.Done()) != nil {
		t.Error("the dead channel still watches the context")
	}
}

// BenchmarkContexts measures Echo calls over loopback TCP (client and
// server in this process) with three kinds of context: Background (no
// Done channel, no select), one context per caller (a request's), and one
// context shared by every caller (a worker pool's), which the channel
// watches (ctxWatch). cpu-ns/op is both ends' CPU per call; x-background
// is that over the Background run's at the same concurrency, in this run.
//
//	go test -run='^$' -bench='^BenchmarkContexts$' -benchtime=300000x -count=3 ./kernel/exchange
func BenchmarkContexts(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	for _, conc := range []int{100, 10_000} {
		var base float64
		for _, kind := range []string{"background", "per-caller", "shared"} {
			b.Run(fmt.Sprintf("%s/c=%d", kind, conc), func(b *testing.B) {
				f := startServer(b, false, nil)
				ch := f.dial(nil)
				shared, cancel := context.WithCancel(context.Background())
				defer cancel()
				var failed atomic.Value
				run := func(n int) {
					var next atomic.Int64
					var wg sync.WaitGroup
					for range conc {
						wg.Go(func() {
							ctx := context.Background()
							switch kind {
							case "per-caller":
								var stop context.CancelFunc
								ctx, stop = context.WithCancel(ctx)
								defer stop()
							case "shared":
								ctx = shared
							}
							var reply []byte
							for next.Add(1) <= int64(n) {
								inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{payload}, Reply: &reply}
								if res := ch.Invoke(ctx, mpCodec{}, inv, 10*time.Second); res.Err != nil {
									failed.Store(res.Err)
									return
								}
							}
						})
					}
					wg.Wait()
				}
				run(max(b.N/10, 2*conc)) // warm-up: goroutines, stacks, pools, the watcher
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				run(b.N)
				b.StopTimer()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
				cpu := float64(cpuTime()-cpu0) / float64(b.N)
				b.ReportMetric(cpu, "cpu-ns/op")
				if kind == "background" {
					base = cpu
				} else if base > 0 {
					b.ReportMetric(cpu/base, "x-background")
				}
			})
		}
	}
}

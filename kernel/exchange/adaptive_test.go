package exchange

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// providerStats sums the stats of the server's provider channels.
func (f *fixture) providerStats() ChannelStats {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	var sum ChannelStats
	for ch := range f.srv.chans {
		st := ch.Stats()
		sum.HandOffs += st.HandOffs
		sum.FramesRead += st.FramesRead
		sum.Writes += st.Writes
	}
	return sum
}

// warmUp makes one call on ch, so that the provider runs the next read
// batch on the reader (a connection's first batch, like one after
// quietAfter of silence, goes to the worker pool).
func warmUp(t *testing.T, ch *Channel) {
	t.Helper()
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "warm"), 5*time.Second); res.Err != nil {
		t.Fatalf("warm-up call: %v", res.Err)
	}
}

// Options.Adaptive: fast requests run on the reader and are all answered;
// a request that blocks is handed off within about handOffAfter, so the
// calls and heartbeats behind it on the same connection are answered while
// it blocks, and it still gets its own answer when it returns.
func TestAdaptiveDispatch(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, func(o *Options) { o.Adaptive = true })
			ch := f.dial(nil)
			concurrentEchoes(t, ch, 200)
			// Echo takes microseconds; a hand-off here would mean the OS
			// stopped the reader for a millisecond (a loaded machine).
			t.Logf("hand-offs after 200 Echo calls: %d", f.providerStats().HandOffs)
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Payload", 1<<20), 10*time.Second); res.Err != nil {
				t.Fatalf("1 MiB response: %v", res.Err)
			}

			// A slow request on the same connection: the ones behind it
			// are answered long before it returns.
			warmUp(t, ch)
			slow := make(chan error, 1)
			start := time.Now()
			go func() {
				res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1500), 5*time.Second)
				if res.Err == nil && toInt(res.Value) != 1500 {
					res.Err = fmt.Errorf("value %v", res.Value)
				}
				slow <- res.Err
			}()
			time.Sleep(50 * time.Millisecond)
			for i := range 20 {
				if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), 500*time.Millisecond); res.Err != nil {
					t.Fatalf("call %d behind a slow request: %v", i, res.Err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			if err := ch.Ping(ctx); err != nil {
				t.Fatalf("ping behind a slow request: %v", err)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("calls behind the slow request done after %v, want well before it returns (1.5 s)", el)
			}
			if err := <-slow; err != nil {
				t.Fatalf("slow request: %v", err)
			}
			if n := f.providerStats().HandOffs; n < 1 {
				t.Errorf("hand-offs = %d, want at least 1 (the slow request)", n)
			}

			// A second connection is not affected, and after the slow
			// request everything still works on the first.
			other := f.dial(nil)
			if res := other.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "other"), 5*time.Second); res.Err != nil {
				t.Fatalf("other connection: %v", res.Err)
			}
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "after"), 5*time.Second); res.Err != nil || res.Value != "after" {
				t.Fatalf("after the slow request: %v %v", res.Value, res.Err)
			}
		})
	}
}

// A handler blocked on the reader does not hold up Close: the hand-off
// passes the reader's place in Close's wait to the new reader.
func TestAdaptiveDispatch_CloseWithBlockedHandler(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Adaptive = true })
	ch := f.dial(nil)
	warmUp(t, ch)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch.Invoke(context.Background(), mpCodec{}, echoInv("Block"), 10*time.Second)
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	f.srv.mu.Lock()
	var chans []*Channel
	for pc := range f.srv.chans {
		chans = append(chans, pc)
	}
	f.srv.mu.Unlock()
	for _, pc := range chans {
		pc.Close("test")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Close with a blocked handler took %v", el)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked call did not end after its provider channel closed")
	}
}

// Slow requests pipelined on one connection run side by side after the
// first hand-off (the connection's requests then go to the worker pool),
// not one after another on the reader: ten 200 ms requests take about
// 200 ms, not 2 s.
func TestAdaptiveDispatch_SlowRequestsRunSideBySide(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Adaptive = true })
	ch := f.dial(nil)
	warmUp(t, ch)
	handOffs := counters.Dispatch.HandOffs.Load()
	start := time.Now()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 200), 10*time.Second); res.Err != nil {
				t.Errorf("Sleep(200): %v", res.Err)
			}
		})
	}
	wg.Wait()
	if el := time.Since(start); el > time.Second {
		t.Errorf("ten 200 ms requests on one connection took %v, want well under 2 s (side by side)", el)
	}
	if n := f.providerStats().HandOffs; n < 1 {
		t.Errorf("hand-offs = %d, want at least 1", n)
	}
	if n := counters.Dispatch.HandOffs.Load() - handOffs; n < 1 {
		t.Errorf("process-wide hand-offs (airnode_provider_handoffs_total) went up by %d, want at least 1", n)
	}
}

// A connection's first read batch, and the first after quietAfter of
// silence, goes to the worker pool: a request that blocks there is not
// handed off (nothing ran on the reader) and does not hold up the calls
// behind it either.
func TestAdaptiveDispatch_QuietConnectionUsesPool(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Adaptive = true })
	ch := f.dial(nil)
	quiet := counters.Dispatch.Quiet.Load()
	slow := make(chan error, 1)
	go func() {
		slow <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 500), 5*time.Second).Err
	}()
	time.Sleep(50 * time.Millisecond)
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 400*time.Millisecond); res.Err != nil {
		t.Fatalf("call behind a slow first request: %v", res.Err)
	}
	if err := <-slow; err != nil {
		t.Fatalf("slow request: %v", err)
	}
	if n := f.providerStats().HandOffs; n != 0 {
		t.Errorf("hand-offs = %d, want 0: the first batch goes to the pool", n)
	}
	if n := counters.Dispatch.Quiet.Load() - quiet; n < 1 {
		t.Errorf("airnode_provider_pooled_total{reason=quiet} went up by %d, want at least 1", n)
	}
}

// The watchdog backs off while the requests it finds are quick; the first
// slow request after a long run of quick ones is still handed off within
// about maxWatchPeriod + handOffAfter (11 ms), so a call behind it is
// answered long before it returns. Once the connection closes the
// watchdog's goroutine ends.
func TestAdaptiveDispatch_WatchdogBacksOffAndStillHandsOff(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Adaptive = true })
	ch := f.dial(nil)
	warmUp(t, ch)
	for i := range 300 { // sequential quick requests: the checks find none running
		if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), 5*time.Second); res.Err != nil {
			t.Fatalf("Echo %d: %v", i, res.Err)
		}
	}
	slow := make(chan error, 1)
	go func() {
		slow <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1000), 5*time.Second).Err
	}()
	time.Sleep(5 * time.Millisecond)
	start := time.Now()
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "behind"), 5*time.Second); res.Err != nil {
		t.Fatalf("call behind the slow request: %v", res.Err)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("call behind the slow request answered after %v, want about maxWatchPeriod + handOffAfter (11 ms), far below its 1 s", el)
	}
	if err := <-slow; err != nil {
		t.Fatalf("slow request: %v", err)
	}
	if n := f.providerStats().HandOffs; n < 1 {
		t.Errorf("hand-offs = %d, want at least 1 (the slow request)", n)
	}

	ch.Close("test")
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.srv.pool.dog.mu.Lock()
		running := f.srv.pool.dog.running
		f.srv.pool.dog.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watchdog still runs 5 s after its only connection closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A lone hand-off sends the connection's requests to the worker pool for
// 10 ms, not a second: a slow request 150 ms later runs on the reader
// again and is handed off in turn (with a 1 s window it would have gone to
// the pool, and HandOffs would stay 1).
func TestAdaptiveDispatch_LoneHandOffPoolsBriefly(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Adaptive = true })
	ch := f.dial(nil)
	warmUp(t, ch)
	for i := range 2 {
		before := f.providerStats().HandOffs
		if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 30), 5*time.Second); res.Err != nil {
			t.Fatalf("Sleep(30) #%d: %v", i, res.Err)
		}
		if n := f.providerStats().HandOffs; n <= before {
			t.Fatalf("slow request #%d was not handed off (hand-offs %d before, %d after): it went to the worker pool", i, before, n)
		}
		time.Sleep(150 * time.Millisecond)
		warmUp(t, ch) // a quick call between: the connection stays warm
	}
}

// nextPoolWindow: 10 ms after a first or lone hand-off, doubling while
// hand-offs follow within four windows, capped at poolAfterHandOff.
func TestNextPoolWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	cases := []struct {
		now, last, window, want int64
	}{
		{now: 5000 * ms, last: 0, window: 0, want: 10 * ms},               // first
		{now: 5021 * ms, last: 5000 * ms, window: 10 * ms, want: 20 * ms}, // blocking again right after the window
		{now: 5039 * ms, last: 5000 * ms, window: 10 * ms, want: 20 * ms},
		{now: 5040 * ms, last: 5000 * ms, window: 10 * ms, want: 10 * ms}, // calm for four windows: start over
		{now: 5700 * ms, last: 5000 * ms, window: 640 * ms, want: 1000 * ms},
		{now: 6010 * ms, last: 5000 * ms, window: 1000 * ms, want: 1000 * ms}, // capped
		{now: 9100 * ms, last: 5000 * ms, window: 1000 * ms, want: 10 * ms},
	}
	for _, c := range cases {
		if got := nextPoolWindow(c.now, c.last, c.window); got != c.want {
			t.Errorf("nextPoolWindow(%d ms, %d ms, %d ms) = %d ms, want %d ms", c.now/ms, c.last/ms, c.window/ms, got/ms, c.want/ms)
		}
	}
	// A service that keeps blocking reaches the 1 s window after seven
	// hand-offs, each right after the previous window ends.
	now, last, w := int64(1), int64(0), int64(0)
	for i := range 8 {
		w = nextPoolWindow(now, last, w)
		if i == 7 && w != poolAfterHandOff {
			t.Errorf("window after 8 back-to-back hand-offs = %d ms, want %d ms", w/ms, poolAfterHandOff/ms)
		}
		last, now = now, now+w+11*ms
	}
}

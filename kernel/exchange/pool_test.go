package exchange

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// countingHandler wraps the echo service and records the most handlers
// running at once.
type countingHandler struct {
	svc          *echoService
	running, top atomic.Int64
}

func (h *countingHandler) Serve(ctx context.Context, req *Request) spi.Result {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for {
		t := h.top.Load()
		if n <= t || h.top.CompareAndSwap(t, n) {
			break
		}
	}
	return h.svc.Serve(ctx, req)
}

// Issue 9: a Server runs at most Options.Workers handlers at once, for all
// its channels; requests beyond wait in the queue and all complete (each
// within a tenth of its timeout: TestWorkerPool_QueueWaitIsATenthOfTheTimeout), while
// heartbeats on the same connections are answered and Shutdown drains the
// queue.
func TestWorkerPool_BoundsHandlersAndKeepsReading(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "smux"}[mux], func(t *testing.T) {
			h := &countingHandler{svc: &echoService{}}
			f := startServer(t, mux, func(o *Options) { o.Workers = 2; o.Handler = h })
			a, b := f.dial(nil), f.dial(nil)
			// 8 calls of 800 ms on 2 workers: 3.2 s, the last queued 2.4 s,
			// within a tenth of their 60 s timeout (queueWaitBound)
			const n = 4
			errs := make(chan error, 2*n)
			for _, ch := range []*Channel{a, b} {
				for range n {
					go func() {
						errs <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 800), time.Minute).Err
					}()
				}
			}
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 2*n }) {
				t.Fatalf("in flight = %d, want %d", f.srv.InFlight(), 2*n)
			}
			// Both workers are busy and six requests queued: heartbeats are still
			// answered, well before the queue drains (2.4 s).
			for _, ch := range []*Channel{a, b} {
				ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
				err := ch.Ping(ctx)
				cancel()
				if err != nil {
					t.Fatalf("ping while the pool is busy: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := f.srv.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			for range 2 * n {
				if err := <-errs; err != nil {
					t.Errorf("queued call: %v", err)
				}
			}
			if top := h.top.Load(); top != 2 {
				t.Errorf("at most %d handlers ran at once, want 2", top)
			}
			<-f.errc
			f.errc <- nil
		})
	}
}

// A consumer that never reads its large responses does not hold a worker:
// with a single worker, another consumer is still served.
func TestWorkerPool_SlowConsumerHoldsNoWorker(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Workers = 1 })
	c := rawConn(t, f)
	c.(*net.TCPConn).SetReadBuffer(4096)
	for i := range 12 { // 12 MiB of responses: more than maxQueued and the socket buffers
		fb := getFrame()
		if err := encodeRequest(fb, mpCodec{}, echoInv("Payload", 1<<20), 0); err != nil {
			t.Fatal(err)
		}
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
		if _, err := c.Write(fb.b); err != nil {
			t.Fatal(err)
		}
		putFrame(fb)
	}
	// The one worker makes 12 answers of 1 MiB (parking those with no
	// room) and then waits idle, the responses still unsent: seconds
	// under -race on a loaded machine, so the wait polls for that state
	// for up to 30 s. A worker held by the unread socket never goes idle.
	if !waitFor(30*time.Second, func() bool {
		chans := serverChannels(f.srv)
		return len(chans) == 1 && f.srv.InFlight() > 0 && f.srv.pool.idleWithEmptyQueue() == 1
	}) {
		t.Fatalf("in flight %d, queued for the worker %d, idle workers %d: the one worker is held",
			f.srv.InFlight(), f.srv.pool.queuedLen(), f.srv.pool.idleWithEmptyQueue())
	}
	time.Sleep(100 * time.Millisecond) // the responses pile up behind the unread socket
	if f.srv.InFlight() == 0 {
		t.Fatal("no response waited for room")
	}
	// 30 s of timeout: it may wait 3 s for the worker (a tenth), should
	// the reader hand the worker a last request of the slow consumer's
	// meanwhile (1 MiB to make; 0.8 s seen under load, over the 0.5 s
	// that a 5 s timeout allowed). A worker held by the slow consumer
	// refuses it SERVER_THREADPOOL_EXHAUSTED after those 3 s.
	other := f.dial(nil)
	if res := other.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 30*time.Second); res.Err != nil {
		t.Fatalf("other consumer with the slow one's responses blocked: %v", res.Err)
	}
	c.Close()
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 0 }) {
		t.Fatalf("responses still blocked after the connection closed: %d", f.srv.InFlight())
	}
}

// idleWithEmptyQueue returns the pool's idle workers when no request is
// queued, else 0.
func (p *workerPool) idleWithEmptyQueue() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head < len(p.queue) {
		return 0
	}
	return len(p.idle)
}

// A request whose consumer deadline passes while it waits for a worker is
// answered SERVER_TIMEOUT without running (new-user finding: a provider
// built 256 KiB responses for calls long given up on), and one that
// finishes after the deadline has its result replaced; both are counted.
func TestWorkerPool_ExpiredRequestsAreNotRun(t *testing.T) {
	h := &countingHandler{svc: &echoService{}}
	var served atomic.Int64
	f := startServer(t, false, func(o *Options) {
		o.Workers = 1
		o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
			served.Add(1)
			return h.Serve(ctx, req)
		})
	})
	ch := f.dial(nil)
	slow := make(chan error, 1)
	go func() {
		slow <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1500), 5*time.Second).Err
	}()
	if !waitFor(2*time.Second, func() bool { return served.Load() == 1 }) {
		t.Fatal("slow call never started")
	}
	// A second of timeout each: the worker pool's admission bound (a
	// tenth of it) lets them all queue even when their 20 goroutines
	// reach the provider 100 ms apart on a loaded machine; with 100 ms
	// each, calls arriving 10 ms after the first were refused
	// SERVER_THREADPOOL_EXHAUSTED at once, by design, and never expired.
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			errs <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Payload", 256<<10), time.Second).Err
		}()
	}
	for range n {
		if st := spi.StatusOf(<-errs); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
			t.Fatalf("queued call: status %v, want a timeout", st)
		}
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	chans := serverChannels(f.srv)
	if !waitFor(2*time.Second, func() bool { return chans[0].Stats().Expired == n }) {
		t.Fatalf("expired = %d, want %d", chans[0].Stats().Expired, n)
	}
	if s := served.Load(); s != 1 {
		t.Fatalf("handler ran %d times, want 1 (the queued calls had expired)", s)
	}
	// Finishing after the deadline: the result is not sent.
	res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 300), 150*time.Millisecond)
	if st := spi.StatusOf(res.Err); st != spi.StatusServerTimeout {
		t.Fatalf("late call: %v, want SERVER_TIMEOUT", res.Err)
	}
}

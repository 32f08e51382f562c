package exchange

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// ctxReport is what a cancelService handler saw when its context ended.
type ctxReport struct {
	at    time.Time
	err   error
	cause error
}

// cancelService serves the cancel and Goexit tests:
//
//	Wait     signals started, waits on a context derived from ctx (as
//	         the kernel's callCtx is) and reports on ended
//	Poll     signals started, polls ctx.Err() every millisecond (never
//	         asks for Done) and reports on ended
//	Count    counts its runs in ran and echoes its argument
//	Hold     waits for release (ignoring ctx)
//	Goexit   calls runtime.Goexit at once
//	SlowExit sleeps 20 ms (past the adaptive hand-off), then Goexit
//	HoldExit signals started, waits for release, then Goexit
//	Echo     echoes its argument
type cancelService struct {
	started chan uint64
	ended   chan ctxReport
	release chan struct{}
	ran     atomic.Int64
}

func newCancelService() *cancelService {
	return &cancelService{started: make(chan uint64, 1024), ended: make(chan ctxReport, 1024), release: make(chan struct{})}
}

func (s *cancelService) Serve(ctx context.Context, req *Request) spi.Result {
	args := make([]any, req.NumArgs)
	for i := range args {
		if err := req.Args.Decode(&args[i]); err != nil {
			return spi.Result{Err: err}
		}
	}
	switch req.Method {
	case "Wait":
		child, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		s.started <- 0
		<-child.Done()
		s.ended <- ctxReport{at: time.Now(), err: child.Err(), cause: context.Cause(child)}
		return spi.Result{Err: child.Err()}
	case "Poll":
		s.started <- 0
		for ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		s.ended <- ctxReport{at: time.Now(), err: ctx.Err(), cause: context.Cause(ctx)}
		return spi.Result{Err: ctx.Err()}
	case "Count":
		s.ran.Add(1)
		return spi.Result{Value: args[0]}
	case "Hold":
		s.started <- 0
		<-s.release
		return spi.Result{Value: "held"}
	case "Goexit":
		runtime.Goexit()
	case "SlowExit":
		time.Sleep(20 * time.Millisecond)
		runtime.Goexit()
	case "HoldExit":
		s.started <- 0
		<-s.release
		runtime.Goexit()
	case "Echo":
		return spi.Result{Value: args[0]}
	}
	return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "no method %q", req.Method)}
}

// startCancelServer starts a server with svc as its handler.
func startCancelServer(t *testing.T, mux bool, svc *cancelService, tweak func(*Options)) *fixture {
	t.Helper()
	return startServer(t, mux, func(o *Options) {
		o.Handler = svc
		if tweak != nil {
			tweak(o)
		}
	})
}

// dispatchers are the provider's dispatch modes the tests run under.
var dispatchers = []struct {
	name  string
	tweak func(*Options)
}{
	{"all", nil},
	{"adaptive", func(o *Options) { o.Adaptive = true }},
	{"direct", func(o *Options) { o.Direct = true }},
}

func transportName(mux bool) string { return map[bool]string{false: "tcp", true: "smux"}[mux] }

func recvWithin[T any](t *testing.T, c <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
	}
	var zero T
	return zero
}

// Cancelling the consumer's ctx after the request was sent cancels the
// provider handler's context: ctx.Err() is context.Canceled, the cause
// (through a context derived from it, as the kernel's is) matches
// ErrConsumerCanceled, within 200 ms of the cancel. A handler that only
// polls Err sees it too. The cancelled call is not answered (no late
// response). Both transports, with the worker pool and with adaptive
// dispatch; dispatcher=direct runs the handler on the reader, which reads
// the cancel only after the handler returns (see
// TestCancelDirectDropsRequestsReadAfterIt).
func TestCancelReachesTheProvidersHandler(t *testing.T) {
	for _, mux := range []bool{false, true} {
		for _, d := range dispatchers[:2] {
			for _, method := range []string{"Wait", "Poll"} {
				t.Run(transportName(mux)+"/"+d.name+"/"+method, func(t *testing.T) {
					svc := newCancelService()
					f := startCancelServer(t, mux, svc, d.tweak)
					ch := f.dial(nil)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					done := make(chan spi.Result, 1)
					go func() { done <- ch.Invoke(ctx, mpCodec{}, echoInv(method), 10*time.Second) }()
					recvWithin(t, svc.started, 5*time.Second, "handler start")
					cancelled := time.Now()
					cancel()
					res := recvWithin(t, done, 5*time.Second, "the consumer's call")
					if e := wantStatus(t, res.Err, spi.StatusClientError); !errors.Is(e, context.Canceled) {
						t.Fatalf("consumer: %v, want CLIENT_ERROR matching context.Canceled", res.Err)
					}
					rep := recvWithin(t, svc.ended, 5*time.Second, "the handler's ctx to end")
					if lag := rep.at.Sub(cancelled); lag > 200*time.Millisecond {
						t.Errorf("handler saw the cancel %v after the consumer's cancel, want within 200ms", lag)
					}
					if rep.err != context.Canceled {
						t.Errorf("handler ctx.Err() = %v, want context.Canceled", rep.err)
					}
					if !errors.Is(rep.cause, ErrConsumerCanceled) || !errors.Is(rep.cause, context.Canceled) || !strings.Contains(rep.cause.Error(), "cancelled the call") {
						t.Errorf("handler context.Cause = %v, want one matching ErrConsumerCanceled and context.Canceled", rep.cause)
					}
					if st := ch.Stats(); st.Cancels != 1 {
						t.Errorf("consumer Stats().Cancels = %d, want 1", st.Cancels)
					}
					// the channel goes on, and the cancelled call was not answered
					if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "after"), 5*time.Second); r.Err != nil || r.Value != "after" {
						t.Fatalf("call after the cancel: %v %v", r.Value, r.Err)
					}
					if st := ch.Stats(); st.LateResponses != 0 {
						t.Errorf("the cancelled call was answered: %d late responses", st.LateResponses)
					}
					pcs := f.provChans()
					if len(pcs) != 1 || pcs[0].Stats().Cancels != 1 {
						t.Fatalf("provider channels %d, want one that read 1 cancel", len(pcs))
					}
				})
			}
		}
	}
}

// A deadline is not a cancel: it travels in the request, and a call that
// times out sends no cancel event (the provider's ctx ends with
// DeadlineExceeded on its own). A ctx with a deadline that is cancelled
// first does send one.
func TestCancelNotSentForADeadline(t *testing.T) {
	svc := newCancelService()
	f := startCancelServer(t, false, svc, nil)
	ch := f.dial(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res := ch.Invoke(ctx, mpCodec{}, echoInv("Wait"), 10*time.Second)
	recvWithin(t, svc.started, 5*time.Second, "the handler's start (the request was sent)")
	wantStatus(t, res.Err, spi.StatusServerTimeout)
	rep := recvWithin(t, svc.ended, 5*time.Second, "the handler's ctx to end")
	if rep.err != context.DeadlineExceeded || !errors.Is(rep.cause, context.DeadlineExceeded) {
		t.Fatalf("handler: err %v cause %v, want DeadlineExceeded", rep.err, rep.cause)
	}
	if n := ch.Stats().Cancels; n != 0 {
		t.Fatalf("a deadline sent %d cancel events", n)
	}
	// the call's own timeout: no cancel either
	res = ch.Invoke(context.Background(), mpCodec{}, echoInv("Wait"), 500*time.Millisecond)
	recvWithin(t, svc.started, 5*time.Second, "the handler's start (the request was sent)")
	wantStatus(t, res.Err, spi.StatusServerTimeout)
	recvWithin(t, svc.ended, 5*time.Second, "the handler's ctx to end")
	if n := ch.Stats().Cancels; n != 0 {
		t.Fatalf("a timeout sent %d cancel events", n)
	}
}

// A request still queued for a worker when its cancel arrives is never
// run nor answered, and the worker goes on with the next one. The worker
// pool has one worker, held by another call.
func TestCancelDropsAQueuedRequest(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(transportName(mux), func(t *testing.T) {
			svc := newCancelService()
			f := startCancelServer(t, mux, svc, func(o *Options) { o.Workers = 1 })
			ch := f.dial(nil)
			held := make(chan spi.Result, 1)
			go func() { held <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Hold"), 10*time.Second) }()
			recvWithin(t, svc.started, 5*time.Second, "the held call's start")

			ctx, cancel := context.WithCancel(context.Background())
			queued := make(chan spi.Result, 1)
			go func() { queued <- ch.Invoke(ctx, mpCodec{}, echoInv("Count", "queued"), 10*time.Second) }()
			pc := f.provChans()[0]
			if !waitFor(5*time.Second, func() bool { return f.srv.pool.queuedLen() == 1 }) {
				t.Fatal("the second call was not queued behind the held one")
			}
			cancel()
			wantStatus(t, recvWithin(t, queued, 5*time.Second, "the cancelled call").Err, spi.StatusClientError)
			if !waitFor(5*time.Second, func() bool { return pc.Stats().Cancels == 1 }) {
				t.Fatal("the provider did not read the cancel")
			}
			close(svc.release)
			if r := recvWithin(t, held, 5*time.Second, "the held call"); r.Err != nil {
				t.Fatalf("held call: %v", r.Err)
			}
			if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Count", "next"), 5*time.Second); r.Err != nil || r.Value != "next" {
				t.Fatalf("call after: %v %v", r.Value, r.Err)
			}
			if n := svc.ran.Load(); n != 1 {
				t.Fatalf("Count ran %d times, want 1 (the cancelled queued call must not run)", n)
			}
			// a request is finished just after its response is queued
			waitFor(5*time.Second, func() bool { return pc.Stats().InFlight == 0 })
			if st := pc.Stats(); st.CancelDropped != 1 || st.InFlight != 0 {
				t.Fatalf("provider stats %+v, want CancelDropped 1, InFlight 0", st)
			}
			if n := ch.Stats().LateResponses; n != 0 {
				t.Fatalf("the dropped request was answered (%d late responses)", n)
			}
		})
	}
}

// With dispatcher=direct the reader runs each request, so a cancel is read
// only once the handler before it returned: a running handler is not
// cancelled (as heartbeats, cancels wait for the reader), but a request
// read after its cancel is dropped. A cancel that overtakes its request (a
// request on a stream of its own) is kept for it. A raw consumer writes
// the cancel before the request.
func TestCancelDirectDropsRequestsReadAfterIt(t *testing.T) {
	svc := newCancelService()
	f := startCancelServer(t, false, svc, func(o *Options) { o.Direct = true })
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var cancelFrame [protocol.HeaderLen]byte
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: 7}.Put(cancelFrame[:])
	c.Write(cancelFrame[:])
	c.Write(countFrame(t, 7, "cancelled"))
	c.Write(countFrame(t, 8, "runs"))
	h, _, err := readFrame(br)
	if err != nil || h.ID != 8 || h.Status != spi.StatusOK {
		t.Fatalf("first answer: %+v %v, want request 8 OK (7 was cancelled: no answer)", h, err)
	}
	if n := svc.ran.Load(); n != 1 {
		t.Fatalf("Count ran %d times, want 1", n)
	}
	if st := f.provChans()[0].Stats(); st.CancelDropped != 1 || st.Cancels != 1 {
		t.Fatalf("provider stats %+v, want Cancels 1 CancelDropped 1", st)
	}
}

// countFrame is an encoded Count(v) request frame with id.
func countFrame(t *testing.T, id uint64, v any) []byte {
	t.Helper()
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, echoInv("Count", v), 0); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	return fb.b
}

// A burst of cancels does not hurt other calls: 100 waiting calls are
// cancelled at once while 200 other calls run on the same connection, and
// 20,000 cancel events for ids the provider never saw follow; every other
// call succeeds, every cancelled handler ends, and the provider's record of
// unmatched cancels stays bounded (2 x cancelGenCap).
func TestCancelBurstDoesNotHurtOtherCalls(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(transportName(mux), func(t *testing.T) {
			// side by side: each has its own Server (its own budget)
			// and mostly waits for the budget's releases (18 s each)
			t.Parallel()
			svc := newCancelService()
			f := startCancelServer(t, mux, svc, func(o *Options) { o.Adaptive = true })
			ch := f.dial(nil)
			const waiting = 100
			// The connection has no answer yet, so the Server's budget
			// starts these handlers in a slow start (backpressure.go,
			// budgetEstimate): all 100 run after about 1 s on an idle
			// machine. Their timeout must outlast that on a loaded one,
			// or a handler's deadline ends it before its cancel arrives.
			const hold = waiting * unknownWait
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range waiting {
				wg.Go(func() {
					res := ch.Invoke(ctx, mpCodec{}, echoInv("Wait"), hold)
					if !errors.Is(res.Err, context.Canceled) {
						t.Errorf("cancelled call: %v", res.Err)
					}
				})
			}
			for i := range waiting {
				recvWithin(t, svc.started, 10*time.Second, fmt.Sprintf("handler %d's start", i))
			}
			others := make(chan struct{})
			go func() { defer close(others); concurrentEchoes(t, ch, 200) }()
			cancel()
			for i := range 20000 {
				ch.sendCancel(1<<40 + uint64(i))
			}
			concurrentEchoes(t, ch, 200)
			<-others
			wg.Wait()
			for i := range waiting {
				rep := recvWithin(t, svc.ended, 10*time.Second, fmt.Sprintf("cancelled handler %d", i))
				if !errors.Is(rep.cause, ErrConsumerCanceled) {
					t.Fatalf("handler %d: cause %v", i, rep.cause)
				}
			}
			pc := f.provChans()[0]
			if !waitFor(5*time.Second, func() bool { return pc.Stats().Cancels == waiting+20000 }) {
				t.Fatalf("provider read %d cancels, want %d", pc.Stats().Cancels, waiting+20000)
			}
			if n := pc.cancels.n.Load(); n > 2*cancelGenCap {
				t.Fatalf("%d unmatched cancels kept, want at most %d", n, 2*cancelGenCap)
			}
			if !waitFor(5*time.Second, func() bool { return pc.Stats().InFlight == 0 }) {
				t.Fatalf("%d requests still in flight", pc.Stats().InFlight)
			}
			pc.cancels.mu.Lock()
			w := len(pc.cancels.waiting)
			pc.cancels.mu.Unlock()
			if w != 0 {
				t.Fatalf("%d handlers still registered for cancels", w)
			}
		})
	}
}

// The cancel event is an empty one-way event; providers before it dropped
// such events unread (heartbeatRequest), and so does a consumer: one sent
// to a consumer changes nothing.
func TestCancelEventIgnoredByAConsumer(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	pc := f.provChans()
	if !waitFor(5*time.Second, func() bool { pc = f.provChans(); return len(pc) == 1 }) {
		t.Fatal("no provider channel")
	}
	pc[0].sendCancel(1)
	if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second); r.Err != nil {
		t.Fatalf("call after a cancel event sent to the consumer: %v", r.Err)
	}
	if _, ok := ch.PeerHeartbeat(); ok {
		t.Fatal("the cancel event was taken for a hello")
	}
}

// A handler that calls runtime.Goexit (t.FailNow in a test double) is
// answered SERVER_ERROR "handler called runtime.Goexit" at once, with every
// dispatcher and both transports, and the connection goes on: the worker
// pool replaces its worker, the reader (direct, adaptive) continues in a new
// goroutine. Repeated Goexits, also after the adaptive hand-off, leave the
// pool (one worker) serving and Close ending every goroutine (goleak).
func TestGoexitInHandlerIsAnswered(t *testing.T) {
	for _, mux := range []bool{false, true} {
		for _, d := range dispatchers {
			t.Run(transportName(mux)+"/"+d.name, func(t *testing.T) {
				svc := newCancelService()
				f := startCancelServer(t, mux, svc, func(o *Options) {
					o.Workers = 1
					if d.tweak != nil {
						d.tweak(o)
					}
				})
				ch := f.dial(nil)
				for i, m := range []string{"Goexit", "Goexit", "SlowExit", "Goexit", "SlowExit"} {
					// an Echo first: adaptive runs the next call on the reader
					if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), 5*time.Second); r.Err != nil {
						t.Fatalf("echo %d: %v", i, r.Err)
					}
					start := time.Now()
					res := ch.Invoke(context.Background(), mpCodec{}, echoInv(m), 10*time.Second)
					e := wantStatus(t, res.Err, spi.StatusServerError)
					if !strings.Contains(e.Message, "handler called runtime.Goexit") || !strings.Contains(e.Message, "demo.Echo."+m) {
						t.Fatalf("%s: %q", m, e.Message)
					}
					if el := time.Since(start); el > 5*time.Second {
						t.Fatalf("%s answered after %v", m, el)
					}
				}
				concurrentEchoes(t, ch, 50)
				if ch.Reason() != "" {
					t.Fatalf("channel closed: %s", ch.Reason())
				}
				if f.logs.find("handler called runtime.Goexit") == "" {
					t.Fatal("the Goexit was not logged")
				}
			})
		}
	}
}

// A worker whose handler calls runtime.Goexit hands the queue on: with one
// worker, a request queued behind the Goexit runs.
func TestGoexitWorkerReplacedForTheQueue(t *testing.T) {
	svc := newCancelService()
	f := startCancelServer(t, false, svc, func(o *Options) { o.Workers = 1 })
	ch := f.dial(nil)
	exited := make(chan spi.Result, 1)
	go func() { exited <- ch.Invoke(context.Background(), mpCodec{}, echoInv("HoldExit"), 10*time.Second) }()
	recvWithin(t, svc.started, 5*time.Second, "HoldExit's start")
	queued := make(chan spi.Result, 1)
	go func() { queued <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Count", "q"), 10*time.Second) }()
	// the queued request has been read (counted in flight) before the
	// worker exits: it waits for the only worker
	if !waitFor(5*time.Second, func() bool { return f.srv.inflight.Load() == 2 }) {
		t.Fatalf("the second request was not read: %d in flight", f.srv.inflight.Load())
	}
	close(svc.release)
	wantStatus(t, recvWithin(t, exited, 5*time.Second, "HoldExit").Err, spi.StatusServerError)
	if r := recvWithin(t, queued, 5*time.Second, "the queued call"); r.Err != nil || r.Value != "q" {
		t.Fatalf("queued call: %v %v", r.Value, r.Err)
	}
	f.srv.pool.mu.Lock()
	workers := f.srv.pool.workers
	f.srv.pool.mu.Unlock()
	if workers > 1 {
		t.Fatalf("%d workers counted, max 1", workers)
	}
}

// A one-way event this side does not know (a later addition, like the
// cancel event was) is dropped unread: it is not taken for a heartbeat
// hello, and the connection goes on.
func TestUnknownOneWayEventIgnored(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	body := "heartbeat=dual"
	ev := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: 3, Length: uint32(len(body))}.Append(nil)
	c.Write(append(ev, body...))
	c.Write(echoFrame(t, 4, "after"))
	if h, _, err := readFrame(br); err != nil || h.ID != 4 || h.Status != spi.StatusOK {
		t.Fatalf("answer after an unknown event: %+v, %v", h, err)
	}
	if _, ok := f.provChans()[0].PeerHeartbeat(); ok {
		t.Fatal("an unknown one-way event was taken for a hello")
	}
}

// A Goexit leaves nothing in flight: Shutdown drains at once and returns
// nil, with every dispatcher (before, the request stayed in flight for
// ever and Shutdown ran into its bound).
func TestGoexitLeavesNothingForShutdown(t *testing.T) {
	for _, d := range dispatchers {
		t.Run(d.name, func(t *testing.T) {
			svc := newCancelService()
			f := startCancelServer(t, false, svc, d.tweak)
			ch := f.dial(nil)
			for _, m := range []string{"Echo", "Goexit", "Echo", "SlowExit"} {
				ch.Invoke(context.Background(), mpCodec{}, echoInv(m, 1), 10*time.Second)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := f.srv.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown after Goexits: %v (in flight %d)", err, f.srv.InFlight())
			}
		})
	}
}

// The provider's record of cancels it could not match (they arrived after
// their request finished) is bounded: by count (a cancel survives
// cancelGenCap later ones, at most twice that are kept) and by age (one
// older than 2 x cancelGenAge is gone, and the fast path sees none again).
func TestCancelRecordIsBounded(t *testing.T) {
	c := &Channel{remote: "peer"}
	c.takeCancel(1)
	for i := range cancelGenCap {
		c.takeCancel(100 + uint64(i))
	}
	if !c.cancelled(1, false) {
		t.Fatal("a cancel was forgotten after cancelGenCap later ones")
	}
	for i := range cancelGenCap {
		c.takeCancel(100_000 + uint64(i))
	}
	if c.cancelled(1, false) {
		t.Fatal("a cancel was kept after 2 x cancelGenCap later ones")
	}
	if n := c.cancels.n.Load(); n > 2*cancelGenCap {
		t.Fatalf("%d cancels kept", n)
	}
	// by age: two generations later nothing is left
	for range 2 {
		c.cancels.mu.Lock()
		c.cancels.since -= int64(cancelGenAge)
		c.cancels.mu.Unlock()
		c.cancelled(0, false)
	}
	if n := c.cancels.n.Load(); n != 0 {
		t.Fatalf("%d cancels kept after 2 x cancelGenAge", n)
	}
	c.takeCancel(5)
	if !c.cancelled(5, true) || c.cancelled(5, false) || c.cancels.n.Load() != 0 {
		t.Fatal("a cancel taken by its request is not forgotten")
	}
}

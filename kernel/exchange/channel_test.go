package exchange

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xtaci/smux"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

func TestInvokeEcho(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "single-stream", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			ctx := context.Background()
			res := ch.Invoke(ctx, mpCodec{}, echoInv("EchoAtt", "hello"), time.Second)
			if res.Err != nil || res.Value != "hello" || res.Attachments["echoed"] != "yes" {
				t.Fatalf("Echo: %+v", res)
			}
			var reply string
			inv := echoInv("Echo", "typed")
			inv.Reply = &reply
			if res := ch.Invoke(ctx, mpCodec{}, inv, time.Second); res.Err != nil || reply != "typed" || res.Value != &reply {
				t.Fatalf("typed Echo: %+v, reply %q", res, reply)
			}
			// the provider answers each consumer in the consumer's codec
			if res := ch.Invoke(ctx, jsonCodec{}, echoInv("Echo", "json"), time.Second); res.Err != nil || res.Value != "json" {
				t.Fatalf("json Echo: %+v", res)
			}
			// a large request (own stream on smux) and a large response
			big := bytes.Repeat([]byte{'b'}, 1<<20)
			var back []byte
			inv = echoInv("Echo", big)
			inv.Reply = &back
			if res := ch.Invoke(ctx, mpCodec{}, inv, 5*time.Second); res.Err != nil || !bytes.Equal(back, big) {
				t.Fatalf("1 MiB Echo: %v, %d bytes back", res.Err, len(back))
			}
			if own := ch.Stats().OwnStreams; (own == 1) != mux {
				t.Fatalf("own-stream frames %d on mux=%v", own, mux)
			}
			if ch.Side() != spi.Consumer || ch.RemoteAddr() != f.addr() {
				t.Fatalf("side %s remote %s", ch.Side(), ch.RemoteAddr())
			}
		})
	}
}

// 2000 calls at once on one channel all get their own answers; a minute's
// timeout each, as what is checked is the correlation and the counts, not
// speed (2000 goroutines under -race on a loaded machine).
func TestConcurrentCallsOneChannel(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	const n = 2000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), time.Minute)
			if res.Err != nil || toInt(res.Value) != i {
				errs <- errors.New("call " + strconv.Itoa(i) + ": " + errString(res))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := ch.Stats()
	if st.Pending != 0 || st.FramesWritten != n || st.Writes > st.FramesWritten {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("coalescing: %d frames in %d writes", st.FramesWritten, st.Writes)
}

func errString(res spi.Result) string {
	if res.Err != nil {
		return res.Err.Error()
	}
	return "wrong value"
}

func TestRequestIDsNeverReused(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	before := ch.nextID.Load()
	for range 10 {
		ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), time.Second)
		_ = ch.Ping(context.Background())
	}
	if got := ch.nextID.Load(); got != before+20 {
		t.Fatalf("next id %d after 20 requests from %d", got, before)
	}
}

func TestProviderErrors(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	ctx := context.Background()
	e := wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Fail", "boom"), time.Second).Err, spi.StatusServiceError)
	if e.Error() != "SERVICE_ERROR: boom" {
		t.Fatalf("Fail: %q", e.Error())
	}
	wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Status"), time.Second).Err, spi.StatusServerThreadpoolExhausted)
	e = wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Panic"), time.Second).Err, spi.StatusServerError)
	if !strings.Contains(e.Message, "boom") || f.logs.find("handler panic") == "" {
		t.Fatalf("panic: %v; logs %v", e, f.logs.recs)
	}
	wantStatus(t, ch.Invoke(ctx, mpCodec{}, &spi.Invocation{Service: "nope.Svc", Method: "Echo"}, time.Second).Err, spi.StatusServiceNotFound)
	// the channel survives all of it
	if res := ch.Invoke(ctx, mpCodec{}, echoInv("Echo", 1), time.Second); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestEncodeFailureSendsNothing(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", make(chan int)), time.Second)
	wantStatus(t, res.Err, spi.StatusSerializationError)
	if st := ch.Stats(); st.FramesWritten != 0 || st.Pending != 0 {
		t.Fatalf("after failed encode: %+v", st)
	}
}

// TestT1_ChannelDeathFailsPendingCalls: the provider stops answering
// mid-call and the connection then closes — every pending call fails within
// 200 ms with CHANNEL_INACTIVE, not at its own timeout.
func TestT1_ChannelDeathFailsPendingCalls(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "single-stream", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			const n = 100
			type out struct {
				err error
				at  time.Time
			}
			results := make(chan out, n)
			for range n {
				go func() {
					res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 30000), 30*time.Second)
					results <- out{res.Err, time.Now()}
				}()
			}
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == n }) {
				t.Fatalf("in flight %d, want %d", f.srv.InFlight(), n)
			}
			closed := time.Now()
			f.srv.Close() // the provider goes away: its connections close
			for range n {
				r := <-results
				wantStatus(t, r.err, spi.StatusChannelInactive)
				if d := r.at.Sub(closed); d > 200*time.Millisecond {
					t.Fatalf("call failed %v after the connection closed, want ≤ 200ms", d)
				}
			}
			select {
			case <-ch.Done():
			case <-time.After(time.Second):
				t.Fatal("channel not done after its connection closed")
			}
			if ch.Stats().Pending != 0 {
				t.Fatalf("pending %d", ch.Stats().Pending)
			}
			wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), time.Second).Err, spi.StatusChannelInactive)
			wantStatus(t, ch.Ping(context.Background()), spi.StatusChannelInactive)
		})
	}
}

func TestCloseFailsPendingAndIsIdempotent(t *testing.T) {
	f := startServer(t, false, nil)
	var onClose []string
	var mu sync.Mutex
	ch := f.dial(func(o *Options) {
		o.OnClose = func(_ *Channel, reason string) { mu.Lock(); onClose = append(onClose, reason); mu.Unlock() }
	})
	errc := make(chan error, 1)
	go func() {
		errc <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 10000), 20*time.Second).Err
	}()
	waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 })
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); ch.Close("test close") }()
	}
	wg.Wait()
	e := wantStatus(t, <-errc, spi.StatusChannelInactive)
	if !strings.Contains(e.Message, "test close") {
		t.Fatalf("message %q does not name the reason", e.Message)
	}
	ch.Wait()
	ch.Close("again")
	mu.Lock()
	defer mu.Unlock()
	if len(onClose) != 1 || onClose[0] != "test close" || ch.Reason() != "test close" {
		t.Fatalf("OnClose calls %q, reason %q", onClose, ch.Reason())
	}
}

// TestT2_ClientAndServerTimeout: a request still queued behind a full send
// buffer when its deadline passes is CLIENT_TIMEOUT and is withdrawn, so the
// provider never sees it; a request written (or being written) but not
// answered is SERVER_TIMEOUT.
func TestT2_ClientAndServerTimeout(t *testing.T) {
	t.Run("server timeout", func(t *testing.T) {
		f := startServer(t, false, nil)
		ch := f.dial(nil)
		start := time.Now()
		e := wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 2000), 300*time.Millisecond).Err, spi.StatusServerTimeout)
		if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
			t.Fatalf("timed out after %v, want about 300ms", d)
		}
		if !strings.Contains(e.Message, "demo.Echo.Sleep") {
			t.Fatalf("message %q", e.Message)
		}
		if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), time.Second); res.Err != nil {
			t.Fatalf("next call: %v", res.Err)
		}
		if ch.Stats().Pending != 0 {
			t.Fatal("pending entry left behind")
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		// The socket buffers fill up and the writer blocks inside the big
		// request's write, so the small request behind it stays queued.
		ch, release, seen := slowPeer(t)
		big := bytes.Repeat([]byte{1}, 7<<20)
		bigErr := make(chan error, 1)
		go func() { // request id 1
			bigErr <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", big), time.Second).Err
		}()
		waitWriterStuck(t, ch)
		// request id 2: queued behind the big one when its deadline passes
		e := wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 200*time.Millisecond).Err, spi.StatusClientTimeout)
		if !strings.Contains(e.Message, "never sent") {
			t.Fatalf("message %q", e.Message)
		}
		// the big request was handed to the socket: it may still arrive
		e = wantStatus(t, <-bigErr, spi.StatusServerTimeout)
		if !strings.Contains(e.Message, "being written") {
			t.Fatalf("message %q", e.Message)
		}
		if ch.Stats().Pending != 0 {
			t.Fatal("pending entries left behind")
		}
		// The peer reads again; request id 3 follows. The peer must see 1
		// and 3, never 2: a failover retry of 2 cannot run it twice.
		release()
		go ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 3), 5*time.Second)
		var ids []uint64
		deadline := time.After(10 * time.Second)
		for len(ids) == 0 || ids[len(ids)-1] != 3 {
			select {
			case id := <-seen:
				ids = append(ids, id)
			case <-deadline:
				t.Fatalf("peer saw request ids %v, never 3", ids)
			}
		}
		if len(ids) != 2 || ids[0] != 1 {
			t.Fatalf("peer saw request ids %v, want [1 3] (the withdrawn request 2 must never be sent)", ids)
		}
	})
}

// TestT2_LargeRequestsBehindALargeOne: ten 4 MiB requests at once to a
// peer that reads nothing. The writer takes one batch of at most sealAt
// bytes plus a frame at a time, so the requests queued behind the one being
// written are withdrawn at their deadline (CLIENT_TIMEOUT, safe to retry)
// and never reach the peer; each call ends at its 500 ms timeout
// (encoding 4 MiB counts against it), not when the peer reads. The upper
// bound is 10 s, not 1.5 s: under load (two busy loops beside a nice 15
// test) encoding a 4 MiB request took 1.7 to 2.9 s and the calls ended
// after 2.1 to 3.3 s, CLIENT_TIMEOUT "timed out after 2.944s encoding its
// 4194344 bytes request" (the statuses, not the time, tell a withdrawn
// request from one being written).
func TestT2_LargeRequestsBehindALargeOne(t *testing.T) {
	ch, release, seen := slowPeer(t)
	big := bytes.Repeat([]byte{1}, 4<<20)
	var mu sync.Mutex
	statuses := map[spi.Status]int{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			start := time.Now()
			res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", big), 500*time.Millisecond)
			el := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			statuses[spi.StatusOf(res.Err)]++
			if el < 450*time.Millisecond || el > 10*time.Second {
				t.Errorf("call ended after %v, want at its 500 ms timeout (or its encoding's end, on a loaded machine): %v", el, res.Err)
			}
		})
	}
	wg.Wait()
	t.Logf("statuses: %v", statuses)
	if statuses[spi.StatusClientTimeout] < 5 || statuses[spi.StatusClientTimeout]+statuses[spi.StatusServerTimeout] != 10 {
		t.Fatalf("statuses %v, want most CLIENT_TIMEOUT (withdrawn behind the one being written), the rest SERVER_TIMEOUT", statuses)
	}
	if ch.Stats().Pending != 0 {
		t.Fatal("pending entries left behind")
	}
	// The peer reads again: it sees only the requests that were being
	// written (SERVER_TIMEOUT), then the next call.
	release()
	go ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 5*time.Second) // id 11; the raw peer never answers
	var ids []uint64
	for len(ids) == 0 || ids[len(ids)-1] != 11 {
		select {
		case id := <-seen:
			ids = append(ids, id)
		case <-time.After(10 * time.Second):
			t.Fatalf("peer saw request ids %v, never 11", ids)
		}
	}
	if got, want := len(ids)-1, statuses[spi.StatusServerTimeout]; got != want {
		t.Fatalf("peer saw request ids %v: %d before id 11, want the %d SERVER_TIMEOUT ones only", ids, got, want)
	}
}

// A connection that dies while calls are pending: a call whose request
// had been handed to the transport fails CHANNEL_INACTIVE with
// spi.ErrRequestSent (the provider may have run it: failover retries it
// only for idempotent methods); one whose request was still queued fails
// CHANNEL_INACTIVE without it (never sent: safe to retry). New-user
// finding: a response over the consumer's payload limit closed the
// connection and failover ran the method three times.
func TestChannelDeathTellsWhetherTheRequestWasSent(t *testing.T) {
	ch, _, _ := slowPeer(t)
	bigErr := make(chan error, 1)
	go func() { // its batch is being written when the channel dies
		bigErr <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", bytes.Repeat([]byte{1}, 7<<20)), 10*time.Second).Err
	}()
	waitWriterStuck(t, ch)
	smallErr := make(chan error, 1)
	go func() { // queued behind it
		smallErr <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 10*time.Second).Err
	}()
	if !waitFor(5*time.Second, func() bool { return ch.Stats().Pending == 2 }) {
		t.Fatal("the small call never became pending")
	}
	time.Sleep(20 * time.Millisecond) // its frame is queued
	ch.Close("test: provider gone")
	e := wantStatus(t, <-bigErr, spi.StatusChannelInactive)
	if !errors.Is(e, spi.ErrRequestSent) || !strings.Contains(e.Message, "may have run it") {
		t.Errorf("call whose request was being written: %v; want ErrRequestSent", e)
	}
	e = wantStatus(t, <-smallErr, spi.StatusChannelInactive)
	if errors.Is(e, spi.ErrRequestSent) {
		t.Errorf("call whose request was still queued: %v; want no ErrRequestSent (never sent)", e)
	}
}

func TestContextCancelAndDeadline(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	e := wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Sleep", 2000), 5*time.Second).Err, spi.StatusClientError)
	if !errors.Is(e, context.Canceled) {
		t.Fatalf("cancelled call: %v does not wrap context.Canceled", e)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer dcancel()
	wantStatus(t, ch.Invoke(dctx, mpCodec{}, echoInv("Sleep", 2000), 5*time.Second).Err, spi.StatusServerTimeout)
	wantStatus(t, ch.Invoke(dctx, mpCodec{}, echoInv("Echo", 1), 5*time.Second).Err, spi.StatusClientTimeout)
	if ch.Stats().Pending != 0 {
		t.Fatal("pending entries left behind")
	}
}

// TestDeadlinePropagation: the remaining deadline travels in the request
// preamble (Request.Timeout, not an attachment) and the provider's handler
// context is cancelled when it passes.
func TestDeadlinePropagation(t *testing.T) {
	f := startServer(t, false, nil)
	f.svc.canceled = make(chan time.Time, 1)
	ch := f.dial(nil)
	inv := echoInv("Block")
	inv.Attachments = map[string]string{"k": "v"}
	start := time.Now()
	wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, inv, 300*time.Millisecond).Err, spi.StatusServerTimeout)
	var at time.Time
	select {
	case at = <-f.svc.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("handler context never cancelled")
	}
	if d := at.Sub(start); d < 250*time.Millisecond || d > 2*time.Second {
		t.Fatalf("handler cancelled after %v, want about 300ms", d)
	}
	f.svc.mu.Lock()
	att, to, hasDL := f.svc.lastAtt, f.svc.lastTO, f.svc.hasDL
	f.svc.mu.Unlock()
	if to < 200*time.Millisecond || to > 300*time.Millisecond || len(att) != 1 || att["k"] != "v" || !hasDL {
		t.Fatalf("attachments %v, timeout %v, handler deadline %v", att, to, hasDL)
	}
	if len(inv.Attachments) != 1 {
		t.Fatalf("caller's attachments modified: %v", inv.Attachments)
	}
}

func TestNoTimeoutNoAttachment(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 0); res.Err != nil {
		t.Fatal(res.Err)
	}
	f.svc.mu.Lock()
	defer f.svc.mu.Unlock()
	if f.svc.lastAtt != nil || f.svc.hasDL {
		t.Fatalf("attachments %v, deadline %v; want none", f.svc.lastAtt, f.svc.hasDL)
	}
}

func TestPingAndLastReadWrite(t *testing.T) {
	f := startServer(t, true, nil)
	ch := f.dial(nil)
	r0, w0 := ch.LastRead(), ch.LastWrite()
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if !ch.LastRead().After(r0) || !ch.LastWrite().After(w0) {
		t.Fatalf("last read %v→%v, write %v→%v", r0, ch.LastRead(), w0, ch.LastWrite())
	}
	// the provider can ping the consumer too
	var prov *Channel
	f.srv.mu.Lock()
	for c := range f.srv.chans {
		prov = c
	}
	f.srv.mu.Unlock()
	if err := prov.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if prov.Side() != spi.Provider {
		t.Fatalf("side %s", prov.Side())
	}
}

// heartbeat records Watch and stop calls.
type heartbeat struct {
	mu      sync.Mutex
	watched []spi.Channel
	stopped int
}

func (h *heartbeat) Watch(ch spi.Channel) func() {
	h.mu.Lock()
	h.watched = append(h.watched, ch)
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { h.mu.Lock(); h.stopped++; h.mu.Unlock() }) }
}

func TestHeartbeatWatchAndStop(t *testing.T) {
	f := startServer(t, false, nil)
	hb := &heartbeat{}
	ch := f.dial(func(o *Options) { o.Heartbeat = hb })
	ch.Close("bye")
	ch.Wait()
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if len(hb.watched) != 1 || hb.watched[0] != spi.Channel(ch) || hb.stopped != 1 {
		t.Fatalf("watched %d, stopped %d", len(hb.watched), hb.stopped)
	}
}

// A provider that answers and closes its smux session at once (its last
// responses at shutdown): the consumer reads the answers the session had
// buffered before the channel dies, instead of failing the calls waiting
// for them because the session's stream acceptor saw EOF first (a rare
// CHANNEL_INACTIVE 'accept stream: EOF' in TestWorkerPool_BoundsHandlersAndKeepsReading).
func TestLastResponsesBeforeSessionCloseAreRead(t *testing.T) {
	raw := newRawPeer(t, func(c net.Conn) {
		sess, err := smux.Server(c, smuxConfig())
		if err != nil {
			return
		}
		defer sess.Close()
		st, err := sess.AcceptStream()
		if err != nil {
			return
		}
		h, _, err := readFrame(bufio.NewReader(st))
		if err != nil {
			return
		}
		f := getFrame()
		defer putFrame(f)
		_, _ = encodeResponse(f, mpCodec{}, spi.Result{Value: "last"})
		protocol.Header{Flags: mpCodec{}.ID() & protocol.CodecMask, Status: spi.StatusOK, ID: h.ID, Length: uint32(len(f.b) - protocol.HeaderLen)}.Put(f.b)
		_, _ = st.Write(f.b)
		// and close at once: no wait for the consumer to read it
	})
	for i := range 40 {
		conn, err := net.Dial("tcp", raw.addr())
		if err != nil {
			t.Fatal(err)
		}
		sess, err := newSmuxSession(conn, false)
		if err != nil {
			t.Fatal(err)
		}
		ch := NewChannel(sess, Options{Side: spi.Consumer, Codec: codecByID})
		res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second)
		ch.Close("done")
		ch.Wait()
		if res.Err != nil || res.Value != "last" {
			t.Fatalf("call %d: %v, %v; want the response written just before the session closed", i, res.Value, res.Err)
		}
	}
}

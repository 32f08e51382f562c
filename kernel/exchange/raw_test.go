package exchange

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"github.com/airnode/airnode/internal/counters"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// rawPeer is a loopback TCP peer that speaks frames by hand (or not at all).
type rawPeer struct {
	l     net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// newRawPeer accepts connections and runs serve on each (nil: never read).
func newRawPeer(t testing.TB, serve ...func(net.Conn)) *rawPeer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &rawPeer{l: l}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			if len(serve) > 0 {
				p.wg.Add(1)
				go func() { defer p.wg.Done(); serve[0](c) }()
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *rawPeer) addr() string { return p.l.Addr().String() }

// readFrame reads one frame from r.
func readFrame(r io.Reader) (protocol.Header, []byte, error) {
	var hb [protocol.HeaderLen]byte
	h, err := protocol.ReadHeader(r, &hb, 0)
	if err != nil {
		return h, nil, err
	}
	body := make([]byte, h.Length)
	_, err = io.ReadFull(r, body)
	return h, body, err
}

// TestT3_LateResponsesDropped: 100,000 calls time out and their responses
// arrive late — the pending table is back to empty, late responses are
// counted and dropped, memory stays flat.
func TestT3_LateResponsesDropped(t *testing.T) {
	const n = 100_000
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) }) // a failing test must not hang the peer
	var ids []uint64
	var idsMu sync.Mutex
	peer := newRawPeer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		go func() { // read every request, answer nothing until released
			for {
				h, _, err := readFrame(br)
				if err != nil {
					return
				}
				idsMu.Lock()
				ids = append(ids, h.ID)
				idsMu.Unlock()
			}
		}()
		<-release
		idsMu.Lock()
		defer idsMu.Unlock()
		var out bytes.Buffer
		body := []byte{0xc0, 0xa2, 'o', 'k'} // msgpack nil attachments, "ok"
		for _, id := range ids {
			out.Write(protocol.Header{Flags: 1, Status: spi.StatusOK, ID: id, Length: uint32(len(body))}.Append(nil))
			out.Write(body)
		}
		c.Write(out.Bytes())
	})
	ch := NewChannel(dialSession(t, peer.addr(), false), Options{Side: spi.Consumer, Codec: codecByID})
	defer func() { ch.Close("done"); ch.Wait() }()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const workers = 2000
	var wg sync.WaitGroup
	var bad sync.Map
	var withdrawn atomic.Int64 // CLIENT_TIMEOUT: withdrawn, never sent
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / workers {
				err := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", w), 5*time.Millisecond).Err
				switch spi.StatusOf(err) {
				case spi.StatusServerTimeout:
				case spi.StatusClientTimeout:
					withdrawn.Add(1)
				default:
					bad.Store(w, err)
				}
			}
		}()
	}
	wg.Wait()
	bad.Range(func(k, v any) bool { t.Fatalf("worker %v: %v, want a timeout", k, v); return false })
	if p := ch.Pending(); p != 0 {
		t.Fatalf("pending %d after %d timed-out calls", p, n)
	}
	sent := n - int(withdrawn.Load())
	if !waitFor(10*time.Second, func() bool { idsMu.Lock(); defer idsMu.Unlock(); return len(ids) == sent }) {
		idsMu.Lock()
		defer idsMu.Unlock()
		t.Fatalf("peer saw %d requests, want %d (%d of %d withdrawn as CLIENT_TIMEOUT)", len(ids), sent, n-sent, n)
	}
	lateBefore := counters.Channels.LateAnswers.Load()
	releaseOnce.Do(func() { close(release) })
	if !waitFor(10*time.Second, func() bool { return ch.Stats().LateResponses == int64(sent) }) {
		t.Fatalf("late responses %d, want %d", ch.Stats().LateResponses, sent)
	}
	// The process-wide count (airnode_late_answers_total) has them too
	// (tester55: the scenario's "counted" was per channel only).
	if got := counters.Channels.LateAnswers.Load() - lateBefore; got < uint64(sent) {
		t.Fatalf("counters.Channels.LateAnswers rose by %d, want at least %d", got, sent)
	}
	t.Logf("%d calls: %d written and answered late, %d withdrawn before writing", n, sent, n-sent)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Fatalf("heap grew by %d bytes after %d timed-out calls", grew, n)
	}
	if st := ch.Stats(); st.Pending != 0 {
		t.Fatalf("stats after late responses: %+v", st)
	}
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 50*time.Millisecond); spi.StatusOf(res.Err) != spi.StatusServerTimeout {
		t.Fatalf("channel after late responses: %v", res.Err)
	}
}

// rawConn dials the fixture's server without a session layer.
func rawConn(t *testing.T, f *fixture) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectClosed reads until the server closes c.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed by the server: %v", err)
	}
}

// TestGarbageClosesOnlyThatConnection: bad magic, an unknown codec id, a
// truncated header or a length over payload close that connection with a
// logged reason; other connections keep working.
func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Payload = 1 << 20 })
	good := f.dial(nil)
	cases := []struct {
		name, log string
		bytes     []byte
		halfClose bool
	}{
		{"random bytes", "bad magic", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), false},
		// an smux consumer's first frames (version 2: SYN, then PSH of 16
		// bytes, stream 1): the log says why a connection's first bytes
		// may not be airnode's
		{"another transport's first frames", "bad magic 0x0200 (want 0xa17e) in the first bytes of the connection: the consumer speaks another protocol; its URL keys transport and tls must match this side's",
			append([]byte{2, 0, 0, 0, 1, 0, 0, 0, 2, 2, 16, 0, 1, 0, 0, 0}, make([]byte, 16)...), false},
		{"unknown codec id", "unknown codec id 9", protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 9, ID: 1, Length: 1}.Append(nil), false},
		// a call's body over payload is skipped, whatever its size
		// (TestAbuse1_CloseReasonsSayWhatHappened); an event's is not
		{"event over payload", "body 104857600 bytes exceeds payload limit 1 MiB", protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent | 1, ID: 1, Length: 100 << 20}.Append(nil), false},
		{"truncated header", "truncated", []byte{0xA1, 0x7E, 0x80}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := rawConn(t, f)
			c.Write(tc.bytes)
			if tc.name == "unknown codec id" {
				c.Write([]byte{0})
			}
			if tc.halfClose {
				c.(*net.TCPConn).CloseWrite()
			}
			expectClosed(t, c)
			if !waitFor(2*time.Second, func() bool { return f.logs.find(tc.log) != "" }) {
				t.Fatalf("no log naming %q; logs: %q", tc.log, f.logs.recs)
			}
			if res := good.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "still"), 2*time.Second); res.Err != nil || res.Value != "still" {
				t.Fatalf("other connection disturbed: %+v", res)
			}
		})
	}
}

// TestBadRequestKeepsConnection: a body that fails to decode answers
// BAD_REQUEST, is counted with the provider's rejected requests
// (counters.Provider, airnode stats) and the connection stays up.
func TestBadRequestKeepsConnection(t *testing.T) {
	f := startServer(t, false, nil)
	rejected := counters.Provider.BadRequest.Load()
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	junk := []byte{0xc1, 0xc1, 0xc1} // 0xc1 is never valid msgpack
	c.Write(append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 7, Length: uint32(len(junk))}.Append(nil), junk...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, body, err := readFrame(br)
	if err != nil || h.ID != 7 || h.Status != spi.StatusBadRequest || h.IsRequest() {
		t.Fatalf("answer %+v, %v; want BAD_REQUEST for id 7", h, err)
	}
	if !strings.Contains(string(body), "bad request body") {
		t.Fatalf("body %q", body)
	}
	if n := counters.Provider.BadRequest.Load() - rejected; n != 1 {
		t.Errorf("counters.Provider.BadRequest went up by %d, want 1", n)
	}
	// a valid request on the same connection still works
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, echoInv("Echo", "after"), 0); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 8, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	c.Write(fb.b)
	h, body, err = readFrame(br)
	if err != nil || h.ID != 8 || h.Status != spi.StatusOK || !bytes.Contains(body, []byte("after")) {
		t.Fatalf("answer %+v %q, %v", h, body, err)
	}
}

// TestHeartbeatAnsweredByExchange: a two-way heartbeat event gets an event
// answer with the same id and an empty body, without reaching the handler.
func TestHeartbeatAnsweredByExchange(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	c.Write(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 42}.Append(nil))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, body, err := readFrame(c)
	if err != nil || h.ID != 42 || !h.IsEvent() || h.IsRequest() || h.Status != spi.StatusOK || len(body) != 0 {
		t.Fatalf("answer %+v %q, %v", h, body, err)
	}
}

// TestPayloadLimits: over the limit when encoding → SERIALIZATION_ERROR
// naming the limit, nothing sent; a response over the limit → BAD_RESPONSE
// naming the limit, and the next call works; a request over the
// provider's limit (a consumer allowing more) is answered BAD_REQUEST
// naming the provider's limit, a response over the consumer's (a provider
// allowing more) fails that call BAD_RESPONSE naming the consumer's, and
// in both cases the connection goes on (the body is skipped; gRPC answers
// RESOURCE_EXHAUSTED "larger than max" the same way).
func TestPayloadLimits(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "single-stream", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			ctx := context.Background()
			big := bytes.Repeat([]byte{'y'}, 10_000_000)
			e := wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Echo", big), 5*time.Second).Err, spi.StatusSerializationError)
			if want := "exchange: call demo.Echo.Echo: request body of at least 10000024 bytes exceeds this consumer's payload limit 8 MiB (URL key payload; encoding stopped there, not sent)"; e.Message != want {
				t.Fatalf("message %q", e.Message)
			}
			if st := ch.Stats(); st.FramesWritten != 0 || st.Pending != 0 {
				t.Fatalf("something was sent: %+v", st)
			}
			e = wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Payload", 10_000_000), 5*time.Second).Err, spi.StatusBadResponse)
			if want := "exchange: response body 10000006 bytes exceeds the provider's payload limit 8 MiB (URL key payload; the method ran)"; e.Message != want {
				t.Fatalf("message %q", e.Message)
			}
			var got []byte
			inv := echoInv("Payload", 4<<20)
			inv.Reply = &got
			if res := ch.Invoke(ctx, mpCodec{}, inv, 10*time.Second); res.Err != nil || len(got) != 4<<20 {
				t.Fatalf("4 MiB payload: %v, %d bytes", res.Err, len(got))
			}
			// a consumer allowing more than the provider
			small := startServer(t, mux, func(o *Options) { o.Payload = 1 << 20 })
			loose := small.dial(func(o *Options) { o.Payload = 16 << 20 })
			e = wantStatus(t, loose.Invoke(ctx, mpCodec{}, echoInv("Echo", bytes.Repeat([]byte{'z'}, 2<<20)), 10*time.Second).Err, spi.StatusBadRequest)
			if !strings.Contains(e.Message, "exceeds the provider's payload limit 1 MiB") || errors.Is(e, spi.ErrRequestSent) {
				t.Fatalf("request over the provider's limit: %v", e)
			}
			if res := loose.Invoke(ctx, mpCodec{}, echoInv("Echo", 1), 2*time.Second); res.Err != nil {
				t.Fatalf("the same connection after it: %v", res.Err)
			}
			// a provider allowing more than the consumer
			tight := f.dial(func(o *Options) { o.Payload = 1 << 20 })
			e = wantStatus(t, tight.Invoke(ctx, mpCodec{}, echoInv("Payload", 2<<20), 10*time.Second).Err, spi.StatusBadResponse)
			if !strings.Contains(e.Message, "exceeds this consumer's payload limit 1 MiB") || errors.Is(e, spi.ErrRequestSent) {
				t.Fatalf("response over the consumer's limit: %v", e)
			}
			if res := tight.Invoke(ctx, mpCodec{}, echoInv("Echo", 1), 2*time.Second); res.Err != nil {
				t.Fatalf("the same connection after it: %v", res.Err)
			}
		})
	}
}

// TestSlowConsumerBoundsProviderMemory: a consumer that asks for large
// responses and never reads makes the provider's handlers wait for room
// instead of queueing without limit; closing the connection frees them.
func TestSlowConsumerBoundsProviderMemory(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	c.(*net.TCPConn).SetReadBuffer(4096)
	const n = 20
	for i := range n {
		fb := getFrame()
		if err := encodeRequest(fb, mpCodec{}, echoInv("Payload", 1<<20), 0); err != nil {
			t.Fatal(err)
		}
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
		c.Write(fb.b)
	}
	var prov *Channel
	waitFor(5*time.Second, func() bool {
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		for ch := range f.srv.chans {
			prov = ch
		}
		return prov != nil
	})
	queued := func() int { prov.w.mu.Lock(); defer prov.w.mu.Unlock(); q, _ := prov.w.queuedLocked(); return q }
	// some handlers end up blocked: in flight stays above zero
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() > 0 && f.srv.InFlight() < n }) {
		t.Fatalf("in flight %d", f.srv.InFlight())
	}
	time.Sleep(100 * time.Millisecond)
	if q := queued(); q > maxQueued+(1<<20)+1024 {
		t.Fatalf("%d bytes queued, want ≤ %d", q, maxQueued)
	}
	if f.srv.InFlight() == 0 {
		t.Fatal("no handler waited for room")
	}
	c.Close()
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 0 }) {
		t.Fatalf("handlers still blocked after the connection closed: %d", f.srv.InFlight())
	}
}

// TestShutdownFlushesQueuedResponses: responses still queued when the last
// request finishes reach a consumer that reads slowly before Shutdown closes
// the connection (16 MiB of responses: more than the socket buffers hold, so
// the writer is still at work when the handlers are done).
func TestShutdownFlushesQueuedResponses(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	const n = 16
	for i := range n {
		fb := getFrame()
		if err := encodeRequest(fb, mpCodec{}, echoInv("Payload", 1<<20), 0); err != nil {
			t.Fatal(err)
		}
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
		c.Write(fb.b)
	}
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() > 0 }) {
		t.Fatal("requests never arrived")
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- f.srv.Shutdown(ctx)
	}()
	time.Sleep(300 * time.Millisecond) // Shutdown waits: handlers for room, then the writer
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	readOnly := false
	for i := 0; i < n; i++ {
		h, body, err := readFrame(br)
		if err == nil && h.IsEvent() && h.IsRequest() && !h.TwoWay() && string(body) == readOnlyEvent {
			readOnly = true // Shutdown's read-only event, among the responses
			i--
			continue
		}
		if err != nil || h.Status != spi.StatusOK || len(body) < 1<<20 {
			t.Fatalf("response %d of %d: %+v, %d bytes, %v", i+1, n, h, len(body), err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if !readOnly {
		t.Error("no read-only event before the connection closed")
	}
	<-f.errc
	f.errc <- nil
}

// TestPingTimeout: a peer that never answers makes Ping fail at ctx's end
// with a timeout status, leaving nothing pending.
func TestPingTimeout(t *testing.T) {
	peer := newRawPeer(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	ch := NewChannel(dialSession(t, peer.addr(), false), Options{Side: spi.Consumer, Codec: codecByID})
	defer func() { ch.Close("done"); ch.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ch.Ping(ctx)
	if st := spi.StatusOf(err); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
		t.Fatalf("Ping: %v, want a timeout", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond || d > 3*time.Second {
		t.Fatalf("Ping returned after %v", d)
	}
	if ch.Pending() != 0 {
		t.Fatal("ping left pending")
	}
}

package exchange

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xtaci/smux"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Tests for tester17's findings 1, 2, 4 (silent connections), 7 and 11:
// a consumer that reads none of its answers, a ping flood during a call,
// connections that never send a frame, log floods, answers for ids never
// sent.

// requestFrame returns a two-way request frame for inv in msgpack.
func requestFrame(t testing.TB, id uint64, inv *spi.Invocation) []byte {
	t.Helper()
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, inv, 0); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	return fb.b
}

// heapWatch samples the heap in use every 20 ms until stopped and keeps
// the highest value over the value at its start (after a GC).
type heapWatch struct {
	base uint64
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func watchHeap() *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := &heapWatch{base: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > h.base && ms.HeapInuse-h.base > h.peak.Load() {
				h.peak.Store(ms.HeapInuse - h.base)
			}
			select {
			case <-tick.C:
			case <-h.stop:
				return
			}
		}
	}()
	return h
}

// growth stops the watch and returns its peak growth, garbage included,
// and the growth of the heap in use after a GC: what the provider pins.
func (h *heapWatch) growth() (peak, live uint64) {
	close(h.stop)
	<-h.done
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > h.base {
		live = ms.HeapInuse - h.base
	}
	return h.peak.Load(), live
}

// providerChannel returns the server's only channel once there is one.
func providerChannel(t *testing.T, f *fixture) *Channel {
	t.Helper()
	var ch *Channel
	if !waitFor(5*time.Second, func() bool {
		f.srv.mu.Lock()
		defer f.srv.mu.Unlock()
		for c := range f.srv.chans {
			ch = c
		}
		return ch != nil
	}) {
		t.Fatal("no provider channel")
	}
	return ch
}

// badConsumer is a consumer connection that writes requests and reads
// answers only when told to: a raw TCP socket, or a stream of a Go smux v2
// session (whose window keeps the provider's writes on a stream blocked
// once its window is unread; answers over 64 KiB come on streams of their
// own).
type badConsumer struct {
	conn   net.Conn        // the TCP connection
	w      io.Writer       // where requests go: conn or the smux stream
	dl     func(time.Time) // sets the write deadline of w
	closer func()          //
	sess   *smux.Session   // smux only
	stream *smux.Stream    // smux only
	sent   atomic.Int64    // requests written in full
	bytes  atomic.Int64    // bytes written
	rest   []byte          // the part of a frame a stuck write left
}

func dialBadConsumer(t *testing.T, f *fixture) *badConsumer {
	t.Helper()
	conn, err := net.DialTimeout(f.srv.Addr().Network(), f.addr(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		// over loopback's MSS, so that the window reopens promptly once
		// it reads (a smaller one waits for the sender's persist timer)
		tc.SetReadBuffer(256 << 10)
	}
	b := &badConsumer{conn: conn}
	if !f.mux {
		b.w, b.dl = conn, func(d time.Time) { conn.SetWriteDeadline(d) }
		b.closer = func() { conn.Close() }
	} else {
		cfg := smuxConfig()
		cfg.MaxReceiveBuffer = 64 << 20 // its own buffers never stop it reading the provider's window updates
		if b.sess, err = smux.Client(conn, cfg); err != nil {
			t.Fatal(err)
		}
		if b.stream, err = b.sess.OpenStream(); err != nil {
			t.Fatal(err)
		}
		b.w, b.dl = b.stream, func(d time.Time) { b.stream.SetWriteDeadline(d) }
		b.closer = func() { b.sess.Close() }
	}
	t.Cleanup(b.closer)
	return b
}

// write writes frames (frame(id) returns request id's) until max bytes
// are written or a write makes no progress for stuck; it reports whether
// a write was stuck, keeping the rest of its frame for the next call.
func (b *badConsumer) write(frame func(id uint64) []byte, max int64, stuck time.Duration) bool {
	for b.bytes.Load() < max {
		if len(b.rest) == 0 {
			b.rest = frame(uint64(b.sent.Load() + 1))
		}
		b.dl(time.Now().Add(stuck))
		n, err := b.w.Write(b.rest)
		b.bytes.Add(int64(n))
		b.rest = b.rest[n:]
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
				return true
			}
			return false
		}
		b.sent.Add(1)
	}
	return false
}

// drain reads answers, on every stream, until want have arrived or d
// passes, and returns how many did; any status but OK is an error. Its
// goroutines end when the connection closes (cleanup).
func (b *badConsumer) drain(t *testing.T, want int64, d time.Duration) int64 {
	t.Helper()
	b.dl(time.Time{})
	var n, bad atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	count := func(r io.Reader) {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			h, _, err := readFrame(br)
			if err != nil {
				return
			}
			if h.IsEvent() {
				continue
			}
			if h.Status != spi.StatusOK {
				bad.Add(1)
			}
			if n.Add(1) >= want {
				once.Do(func() { close(done) })
			}
		}
	}
	if b.sess == nil {
		go count(b.conn)
	} else {
		go count(b.stream)
		go func() {
			for {
				s, err := b.sess.AcceptStream()
				if err != nil {
					return
				}
				go count(s)
			}
		}()
	}
	select {
	case <-done:
	case <-time.After(d):
	}
	if bad.Load() > 0 {
		t.Errorf("%d answers were not OK", bad.Load())
	}
	return n.Load()
}

// canary makes calls from a normal consumer while the bad one is stalled:
// every one must succeed (within 10 s: generous for a loaded machine,
// where the bad consumer's parked requests, put back in the shared worker
// queue each time its answers drain, run ahead of the canary's; the worst
// latency is logged: sub-millisecond to a few ms on a quiet machine).
func canary(t *testing.T, f *fixture, calls int) time.Duration {
	t.Helper()
	ch := f.dial(nil)
	var worst time.Duration
	for i := range calls {
		start := time.Now()
		res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", fmt.Sprint(i)), 10*time.Second)
		if res.Err != nil || res.Value != fmt.Sprint(i) {
			t.Fatalf("canary call %d while a consumer does not read: %v %v", i, res.Value, res.Err)
		}
		worst = max(worst, time.Since(start))
	}
	return worst
}

// maxHeapGrowth bounds what a consumer that reads nothing may make the
// provider (and this test's own consumer) hold: highWater, the answers
// of handlers already running, request bodies read, garbage not yet
// collected.
const maxHeapGrowth = 64 << 20

// Finding 1: a consumer that never reads its answers. The provider stops
// reading from it once highWater bytes of answers are unsent, whether it
// sends 32 KiB Echo requests (200 MiB offered: the provider stops taking
// them) or 10,000 60-byte Payload(1 MiB) requests (10 GB of answers
// asked for); the heap stays under 64 MiB more than before, a second
// consumer's calls keep succeeding, the stall is counted and logged once;
// once the bad consumer reads, its answers drain.
func TestT17_1_NonReadingConsumerIsStopped(t *testing.T) {
	echo := strings.Repeat("x", 32<<10) // answers on the long-lived stream on smux too
	for _, mux := range []bool{false, true} {
		for _, adaptive := range []bool{false, true} {
			name := map[bool]string{false: "tcp", true: "smux"}[mux] + map[bool]string{false: "/pool", true: "/adaptive"}[adaptive]
			t.Run(name+"/echo", func(t *testing.T) {
				f := startServer(t, mux, func(o *Options) { o.Adaptive = adaptive })
				heap := watchHeap()
				b := dialBadConsumer(t, f)
				frame := requestFrame(t, 0, echoInv("Echo", echo))
				next := func(id uint64) []byte {
					protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(frame) - protocol.HeaderLen)}.Put(frame)
					return frame
				}
				// A write stuck for a second is the provider not reading:
				// its stall, or (adaptive: see below) its reader stopped
				// in its own write; anything else (a loaded machine) is
				// written on.
				var prov *Channel
				stopped := false
				for try := 0; try < 10 && !stopped && b.write(next, 200<<20, time.Second); try++ {
					if prov == nil {
						prov = providerChannel(t, f)
					}
					stopped = adaptive || prov.Stats().Stalls > 0
				}
				if !stopped {
					t.Fatalf("the provider read all %d MiB of requests from a consumer that reads nothing", b.bytes.Load()>>20)
				}
				worst := canary(t, f, 20)
				peak, live := heap.growth()
				st := prov.Stats()
				t.Logf("sent %d requests (%d MiB) before the provider stopped reading; heap +%d MiB live, +%d MiB at the peak; unsent %d KiB; stalls %d; canary worst %v",
					b.sent.Load(), b.bytes.Load()>>20, live>>20, peak>>20, st.Unsent>>10, st.Stalls, worst)
				if live > maxHeapGrowth {
					t.Errorf("heap in use grew %d MiB, want under %d", live>>20, maxHeapGrowth>>20)
				}
				// On these test sessions (no spi.TryWriter, unlike the
				// bundled tcp transport) an adaptive reader writes its read
				// batch's answers itself, and may stop in that write before
				// it looks at the high-water mark
				// (TestT17_1_BundledTCPAdaptiveStalls covers the stall).
				if !adaptive {
					if st.Stalls == 0 {
						t.Error("no stall counted")
					}
					if l := f.logs.find("of answers unread"); l == "" {
						t.Error("the stall was not logged")
					} else if !strings.Contains(l, "the consumer or the path to it is slow") { // tester26 finding 2: not "does not read"
						t.Errorf("stall line %q: want it to say the consumer or the path to it is slow", l)
					}
				}
				if got := b.drain(t, b.sent.Load(), 20*time.Second); got != b.sent.Load() {
					t.Fatalf("%d of %d answers read once the consumer reads: %+v", got, b.sent.Load(), prov.Stats())
				}
				if !waitFor(5*time.Second, func() bool { return prov.Stats().InFlight == 0 }) {
					t.Fatalf("after the drain: %+v", prov.Stats())
				}
			})
			t.Run(name+"/payload", func(t *testing.T) {
				// The handlers that already run when the consumer stops
				// reading finish and keep their answers (1 MiB each here):
				// Workers bounds them, and this test's bound assumes 16.
				f := startServer(t, mux, func(o *Options) { o.Adaptive, o.Workers = adaptive, 16 })
				heap := watchHeap()
				b := dialBadConsumer(t, f)
				const n = 10_000
				frame := requestFrame(t, 0, echoInv("Payload", 1<<20))
				all := make([]byte, 0, n*len(frame))
				for i := range n {
					protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(frame) - protocol.HeaderLen)}.Put(frame)
					all = append(all, frame...)
				}
				go b.write(func(uint64) []byte { return all }, 1, 10*time.Second)
				prov := providerChannel(t, f)
				if !waitFor(5*time.Second, func() bool { return prov.Stats().Stalls > 0 }) {
					t.Fatalf("the provider never stopped: %+v", prov.Stats())
				}
				time.Sleep(300 * time.Millisecond) // let it try to grow
				worst := canary(t, f, 20)
				peak, live := heap.growth()
				st := prov.Stats()
				t.Logf("heap +%d MiB live, +%d MiB at the peak; unsent %d KiB; in flight %d; stalls %d; canary worst %v", live>>20, peak>>20, st.Unsent>>10, st.InFlight, st.Stalls, worst)
				if live > maxHeapGrowth {
					t.Errorf("heap in use grew %d MiB, want under %d", live>>20, maxHeapGrowth>>20)
				}
				// Reading again, the answers flow: 64 of them (64 MiB).
				if got := b.drain(t, 64, 20*time.Second); got < 64 {
					t.Fatalf("%d answers read once the consumer reads, want 64", got)
				}
				b.closer()
				if !waitFor(10*time.Second, func() bool { return f.srv.InFlight() == 0 }) {
					t.Fatalf("parked requests still counted after the consumer left: %+v", prov.Stats())
				}
			})
		}
	}
}

// Finding 1 (b): a stalled reader does not keep its channel from closing,
// and a slow consumer of large answers that does read gets them all.
func TestT17_1_StalledChannelCloses(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Workers = 16 })
	b := dialBadConsumer(t, f)
	frame := requestFrame(t, 0, echoInv("Payload", 1<<20))
	var all []byte
	for i := range 100 {
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(frame) - protocol.HeaderLen)}.Put(frame)
		all = append(all, frame...)
	}
	stalls := counters.Channels.Stalls.Load()
	b.write(func(uint64) []byte { return all }, 1, 5*time.Second)
	prov := providerChannel(t, f)
	if !waitFor(5*time.Second, func() bool { return prov.Stats().Stalls > 0 }) {
		t.Fatalf("no stall: %+v", prov.Stats())
	}
	if counters.Channels.Stalls.Load() == stalls { // tester18 N3: the process-wide count
		t.Error("stall not counted in counters.Channels.Stalls (airnode_backpressure_stalls_total)")
	}
	done := make(chan struct{})
	go func() { prov.Close("test: close a stalled channel"); prov.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a stalled channel did not return")
	}
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 0 }) {
		t.Fatalf("requests still in flight after the close: %d", f.srv.InFlight())
	}
}

func TestT17_1_SlowReaderGetsEveryAnswer(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			const calls, size = 32, 1 << 20 // 32 MiB of answers at once: many stalls
			var wg sync.WaitGroup
			errs := make(chan error, calls)
			for range calls {
				wg.Go(func() {
					var reply []byte
					inv := &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{size}, Reply: &reply}
					if res := ch.Invoke(context.Background(), mpCodec{}, inv, 20*time.Second); res.Err != nil || len(reply) != size {
						errs <- fmt.Errorf("%d bytes, %v", len(reply), res.Err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			prov := providerChannel(t, f)
			t.Logf("provider stats: %+v", prov.Stats())
		})
	}
}

// Finding 2: back-to-back pings while a call runs close the connection
// with the too-many-pings reason (5.3 million were answered in 5 s).
func TestT17_2_PingFloodWhileACallRunsIsClosed(t *testing.T) {
	f := startServer(t, false, nil) // defaults: 1 s, 2 strikes
	c := rawConn(t, f)
	if _, err := c.Write(requestFrame(t, 1, echoInv("Sleep", 30_000))); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 }) {
		t.Fatal("the call never started")
	}
	closed := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(closed) }() // a reader, so that backpressure is not what stops it
	var burst []byte
	for id := uint64(2); id < 2+512; id++ {
		burst = protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: id}.Append(burst)
	}
	start := time.Now()
	pings := 0
	for time.Since(start) < 5*time.Second {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(burst); err != nil {
			break
		}
		pings += 512
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatalf("connection still open after %d pings in %v", pings, time.Since(start))
	}
	var l string
	waitFor(5*time.Second, func() bool { l = f.logs.find("too many pings"); return l != "" }) // logged after the close
	if !strings.Contains(l, "while a call runs") {
		t.Fatalf("close reason %q", l)
	}
	t.Logf("closed after %v, %d pings sent: %s", time.Since(start).Round(time.Millisecond), pings, l)
}

// Finding 4 (part): a connection that sends no complete frame within
// Options.FirstFrameTimeout is closed, logged at Debug; one that sends a
// frame in time is kept.
func TestT17_4_SilentConnectionsAreClosed(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, func(o *Options) { o.FirstFrameTimeout = 300 * time.Millisecond })
			good := f.dial(nil)
			if err := good.Ping(pingCtx(t)); err != nil {
				t.Fatal(err)
			}
			partial := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil)[:10]
			for _, send := range [][]byte{nil, partial} {
				c := rawConn(t, f)
				var r io.Reader = c
				if mux && send != nil { // the 10 bytes on a smux stream
					sess, err := smux.Client(c, smuxConfig())
					if err != nil {
						t.Fatal(err)
					}
					defer sess.Close()
					st, err := sess.OpenStream()
					if err != nil {
						t.Fatal(err)
					}
					r = st
				}
				if send != nil {
					if _, err := r.(io.Writer).Write(send); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err := io.Copy(io.Discard, r)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("sending %d bytes: not closed within 5 s", len(send))
				}
				if d := time.Since(start); d < 250*time.Millisecond {
					t.Errorf("sending %d bytes: closed after %v, before the bound", len(send), d)
				}
			}
			if !waitFor(5*time.Second, func() bool { return f.logs.find("no complete frame within 300ms of connecting") != "" }) {
				t.Error("no log line for the silent connection")
			}
			time.Sleep(400 * time.Millisecond)
			if err := good.Ping(pingCtx(t)); err != nil {
				t.Fatalf("a consumer that pinged at once was closed: %v", err)
			}
		})
	}
}

// Finding 7: 200 connections that each send 16 zero bytes make a handful
// of "channel closed" lines, the first one verbatim, the later ones with
// the count left out.
func TestT17_7_ProtocolErrorLinesAreRateBounded(t *testing.T) {
	f := startServer(t, false, nil)
	const n = 200
	began := time.Now()
	for range n {
		c := rawConn(t, f)
		c.Write(make([]byte, 16))
		expectClosed(t, c)
		c.Close()
	}
	// 1, 2, 4 ... 128: 8 lines, and one summary; a run slowed past
	// ratelog.Every (a loaded machine) may add a line and a summary
	// per Every.
	want := 9 + 2*int(time.Since(began)/ratelog.Every)
	var lines []string
	f.logs.mu.Lock()
	for _, r := range f.logs.recs {
		if strings.HasPrefix(r, "channel closed") && strings.Contains(r, "bad magic") {
			lines = append(lines, r)
		}
	}
	f.logs.mu.Unlock()
	if len(lines) == 0 || len(lines) > want {
		t.Fatalf("%d lines for %d bad connections in %v, want 1 to %d", len(lines), n, time.Since(began).Round(time.Millisecond), want)
	}
	if !strings.Contains(lines[0], "reason=protocol: bad magic 0x0000 (want 0xa17e)") || strings.Contains(lines[0], "suppressed") {
		t.Errorf("first line not verbatim: %s", lines[0])
	}
	if len(lines) > 2 && !strings.Contains(lines[len(lines)-1], "suppressed=") {
		t.Errorf("later line without the count left out: %s", lines[len(lines)-1])
	}
	t.Logf("%d lines; last: %s", len(lines), lines[len(lines)-1])
}

// The limiter's schedule: a line per doubling up to ratelog.Doublings,
// then one per ratelog.Every, each counting what it left out; a quiet
// class starts over.
func TestT17_7_LogLimiterSchedule(t *testing.T) {
	l := &ratelog.Limiter{}
	now := time.Now()
	lines, left := 0, int64(0)
	for i := range 31_562 { // tester17's 5 s of bad connections
		if ok, sup, _ := l.Allow("bad magic", now.Add(time.Duration(i)*150*time.Microsecond)); ok {
			lines++
			left += sup
		}
	}
	if lines != 11 {
		t.Errorf("%d lines in 5 s, want 11 (1, 2, 4 ... 1024)", lines)
	}
	ok, sup, n := l.Allow("bad magic", now.Add(9*time.Second))
	if ok || n != 31_563 {
		t.Errorf("at 9 s: logged %v, burst %d", ok, n)
	}
	ok, sup, _ = l.Allow("bad magic", now.Add(12*time.Second))
	if !ok || sup != 31_563-1024 {
		t.Errorf("after ratelog.Every: logged %v, suppressed %d, want %d", ok, sup, 31_563-1024)
	}
	if ok, _, _ := l.Allow("other reason", now.Add(12*time.Second)); !ok {
		t.Error("a new class's first line was left out")
	}
	if ok, _, n := l.Allow("bad magic", now.Add(30*time.Second)); !ok || n != 1 {
		t.Errorf("after a quiet ratelog.Every: logged %v, burst %d, want a new burst", ok, n)
	}
	for _, tc := range [][2]string{
		{"protocol: bad magic 0x0000 (want 0xa17e)", "protocol: bad magic #x#"},
		{"heartbeat idle: nothing read from 127.0.0.1:37144 for 23.011s", "heartbeat idle: nothing read from #.#.#.#:# for #.#s"},
	} {
		if got := reasonClass(tc[0]); got != tc[1] {
			t.Errorf("reasonClass(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}

// Finding 11: a consumer reading an answer for an id it never sent (above
// the highest, or 0) logs one Warn naming it, rate-bounded; a duplicate
// answer is a late one, silent.
func TestT17_11_AnswerForAnIDNeverSent(t *testing.T) {
	peer := newRawPeer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			h, _, err := readFrame(br)
			if err != nil {
				return
			}
			var out []byte
			for _, id := range []uint64{h.ID, h.ID, h.ID + 1000, 0} { // the answer, a duplicate, two never asked
				body := protocol.AppendAttachments(nil, nil)
				if h.IsEvent() {
					body = nil
					if id != h.ID {
						continue
					}
				} else {
					body = append(body, 0xa2, 'o', 'k') // msgpack "ok"
				}
				out = protocol.Header{Flags: h.Flags & (protocol.CodecMask | protocol.FlagEvent), Status: spi.StatusOK, ID: id, Length: uint32(len(body))}.Append(out)
				out = append(out, body...)
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	logs := &logSink{}
	unsolicited := counters.Channels.Unsolicited.Load()
	ch := NewChannel(dialSession(t, peer.addr(), false), Options{Side: spi.Consumer, Codec: codecByID, Logger: slog.New(logs)})
	t.Cleanup(func() { ch.Close("done"); ch.Wait() })
	for i := range 5 {
		if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second); res.Err != nil || res.Value != "ok" {
			t.Fatalf("call %d: %v %v", i, res.Value, res.Err)
		}
	}
	if !waitFor(5*time.Second, func() bool { return ch.Stats().Unsolicited == 10 }) {
		t.Fatalf("stats %+v, want 10 unsolicited", ch.Stats())
	}
	if n := counters.Channels.Unsolicited.Load() - unsolicited; n != 10 { // tester18 N3
		t.Errorf("counters.Channels.Unsolicited +%d, want +10", n)
	}
	l := logs.find("never sent")
	if !strings.Contains(l, "answer for request id 1001 never sent: is the provider's framing broken?") {
		t.Fatalf("first line %q", l)
	}
	logs.mu.Lock()
	lines := 0
	for _, r := range logs.recs {
		if strings.Contains(r, "never sent") {
			lines++
		}
	}
	logs.mu.Unlock()
	if lines >= 10 {
		t.Errorf("%d lines for 10 answers never asked: not rate-bounded", lines)
	}
	if st := ch.Stats(); st.LateResponses != 15 {
		t.Errorf("late responses %d, want 15 (5 duplicates, 10 never asked)", st.LateResponses)
	}
}

// Finding 1 (a): answers the reader writes itself count like any other:
// refusals over the connection limit (SERVER_THREADPOOL_EXHAUSTED) and
// heartbeat answers (ping-flood guard off) to a consumer that reads
// nothing stop the reader too.
func TestT17_1_RefusalsAndPingAnswersCount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*Options)
		frame func(id uint64) []byte
	}{
		{"refusals", func(o *Options) { o.MaxConcurrent = 1 }, func(id uint64) []byte {
			return requestFrame(t, id, echoInv("Echo", "x"))
		}},
		// each ping carries a hello, so that its answer carries the
		// provider's: 1 KiB answers reach highWater sooner
		{"ping answers", func(o *Options) { o.MinPingInterval, o.Hello = -1, "heartbeat=idle&x="+strings.Repeat("x", 1000) }, func(id uint64) []byte {
			return append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: id, Length: 3}.Append(nil), "a=b"...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// thousands of ~100-byte answers to a peer that reads none:
			// on a Unix socket, see startServerUnix (over TCP this failed
			// under load, the consumer's writes waiting 10 s)
			f := startServerUnix(t, tc.tweak)
			b := dialBadConsumer(t, f)
			if _, err := b.w.Write(requestFrame(t, 1, echoInv("Block"))); err != nil { // holds the one slot
				t.Fatal(err)
			}
			prov := providerChannel(t, f)
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 }) {
				t.Fatal("the blocking call never started")
			}
			var batch []byte
			for id := uint64(2); id < 2+256; id++ {
				batch = append(batch, tc.frame(id)...)
			}
			stopped := false
			for try := 0; try < 10 && !stopped && b.write(func(uint64) []byte { return batch }, 1<<30, time.Second); try++ {
				stopped = prov.Stats().Stalls > 0
			}
			st := prov.Stats()
			if !stopped {
				t.Fatalf("the provider did not stop reading: %+v", st)
			}
			if tc.name == "refusals" && st.Rejected == 0 {
				t.Fatalf("no refusal: %+v", st)
			}
			t.Logf("stopped after %d MiB: %+v", b.bytes.Load()>>20, st)
		})
	}
}

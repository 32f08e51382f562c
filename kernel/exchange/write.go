package exchange

import (
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// ownStreamThreshold is the body size above which a frame gets a stream of
// its own on a multiplexed session, so a large body does not hold up the
// small frames pipelined behind it (issue 3: "say over 64 KiB").
const ownStreamThreshold = 64 << 10

// frameBuf is a growable frame under construction: HeaderLen bytes reserved
// for the header, then the body the codec's encoder appends. It implements
// io.Writer, io.ByteWriter and io.StringWriter so encoders need no adapter,
// and spi.Reserver: with a limit (a request's: the consumer's payload
// limit), a write or a reservation that would take b past it fails with
// an *overLimit and appends nothing, so that encoding stops there.
type frameBuf struct {
	b     []byte
	limit int // the most bytes b may hold, header included; 0: no limit
}

func (f *frameBuf) Write(p []byte) (int, error) {
	if f.limit > 0 && len(f.b)+len(p) > f.limit {
		return 0, f.over(len(p))
	}
	f.b = append(f.b, p...)
	return len(p), nil
}

func (f *frameBuf) WriteByte(c byte) error {
	if f.limit > 0 && len(f.b) >= f.limit {
		return f.over(1)
	}
	f.b = append(f.b, c)
	return nil
}

func (f *frameBuf) WriteString(s string) (int, error) {
	if f.limit > 0 && len(f.b)+len(s) > f.limit {
		return 0, f.over(len(s))
	}
	f.b = append(f.b, s...)
	return len(s), nil
}

// Reserve fails, as a Write of n bytes would, when n more bytes would
// take the frame past its limit (spi.Reserver: an encoder that knows a
// value's size asks before encoding it).
func (f *frameBuf) Reserve(n int) error {
	if f.limit > 0 && len(f.b)+n > f.limit {
		return f.over(n)
	}
	return nil
}

// over is the error of n more bytes that do not fit under f's limit.
func (f *frameBuf) over(n int) error {
	return &overLimit{body: len(f.b) + n - protocol.HeaderLen}
}

// overLimit is the failure of a write to a frame with a limit that would
// have taken its body to body bytes, past the limit: encoding stopped
// there (Channel.encodeFailed names the limit).
type overLimit struct{ body int }

func (e *overLimit) Error() string {
	return fmt.Sprintf("request body of at least %d bytes is over the payload limit", e.body)
}

// maxPooledFrame caps the capacity of buffers returned to the pool, so one
// 8 MiB frame does not pin 8 MiB per pooled buffer.
const maxPooledFrame = 64 << 10

var _ spi.Reserver = (*frameBuf)(nil)

var framePool = sync.Pool{New: func() any { return &frameBuf{b: make([]byte, 0, 512)} }}

// getFrame returns a buffer with the header space reserved.
func getFrame() *frameBuf {
	f := framePool.Get().(*frameBuf)
	f.b, f.limit = f.b[:protocol.HeaderLen], 0
	return f
}

func putFrame(f *frameBuf) {
	if cap(f.b) > maxPooledFrame {
		return
	}
	framePool.Put(f)
}

// writer coalesces frames for one long-lived stream: callers append encoded
// frames to a shared buffer; a writer goroutine, started when the first
// frame arrives and gone once nothing is queued, yields while more frames
// are coming (Channel.coming: callers encoding, handlers running, so they
// join the batch), swaps buffers and writes the whole batch with one
// Write. This is the write-coalescing writer of issue 3, in the spirit of
// Netty's flush consolidation.
//
// Batches are numbered; a frame knows the batch it joined and its offset in
// it, and flushed is the last batch fully written. A call whose deadline
// passes while its frame still waits in buf withdraws it (the frame is cut
// out before the batch is written, so the provider never sees it:
// CLIENT_TIMEOUT, safe to retry elsewhere); once the writer has taken the
// batch the frame may reach the peer (SERVER_TIMEOUT). A batch that has
// reached sealAt bytes takes no more frames: it waits, sealed, for the
// writer, and later frames start the next batch, so the frames queued
// behind large ones stay withdrawable instead of being handed to a write
// that a slow peer blocks.
type writer struct {
	mu     sync.Mutex
	room   sync.Cond // on mu: broadcast when a batch is taken or the writer closes
	buf    []byte    // frames waiting for the next write
	frames int64     // number of frames in buf
	gen    uint64    // batch number of buf; starts at 1
	cut    []span    // withdrawn frames of buf, removed when the batch is taken
	sealed []batch   // full batches before buf's, oldest first (gen-len(sealed) .. gen-1); usually none
	closed bool      // the channel died: nothing will be written any more

	sealedBytes  int   // bytes in sealed
	sealedFrames int64 // frames in sealed

	flushed atomic.Uint64 // last batch number fully written

	// unsent is the bytes queued or being written for the peer: frames
	// in buf and sealed, the batch being written, and the provider's
	// answers waiting in a goroutine of their own (respond). It is
	// raised when a frame joins a batch and lowered (Channel.sent) when
	// its batch is written; the provider's readers stop at highWater
	// (backpressure.go).
	unsent atomic.Int64
	budget *unsentBudget // the provider's Server-wide bound on unsent; nil: none (set before any frame)
	watch  func()        // called when unsent reaches budgetFree (Channel.watchSlow); nil: none (set before any frame)
	wrote  atomic.Int64  // bytes written to the stream so far: the slow-consumer watch's sign of progress
	// bulkAt is when (UnixNano; 0: never) the stream last took a chunk
	// of a large write, a batch or a frame of its own over writeChunk
	// bytes (took): this side's own sending in progress, which the
	// consumer's liveness check counts as activity (liveness.go). Small
	// writes do not stamp it: calls sent to a hung peer are no sign of
	// its life.
	bulkAt atomic.Int64

	// The writer goroutine runs only while there is something to write:
	// an idle connection keeps no goroutine (or stack) for writing.
	out     io.Writer     // the long-lived stream; nil until start
	try     spi.TryWriter // out, when it can write without waiting (writeNowLocked)
	c       *Channel      // for counters, death and goIO; set by start
	running bool          // a writer goroutine is running; on mu
	held    bool          // Options.Direct: the reader is serving a read batch, whose responses wait; on mu
}

// maxQueued bounds the bytes a provider response waits behind: a peer that
// stops reading makes handlers block in enqueueWait instead of growing the
// buffer without limit.
const maxQueued = 4 << 20

// sealAt is the size at which a batch takes no more frames (writer). A
// write of this much costs about a tenth of a millisecond on loopback;
// batches of small frames rarely reach it (10,000 callers' 130-byte
// requests are 1.3 MB).
const sealAt = 256 << 10

// batch is a sealed batch waiting for the writer.
type batch struct {
	buf    []byte
	frames int64
	gen    uint64
	cut    []span
}

// queuedLocked returns the bytes and frames waiting for the writer. On mu.
func (w *writer) queuedLocked() (bytes int, frames int64) {
	return w.sealedBytes + len(w.buf), w.sealedFrames + w.frames
}

func newWriter() *writer { return newWriterBudget(nil) }

// newWriterBudget is newWriter counting its unsent bytes in b too (nil:
// none).
func newWriterBudget(b *unsentBudget) *writer {
	w := &writer{gen: 1, budget: b}
	w.room.L = &w.mu
	return w
}

// enqueueWait is enqueue after waiting until fewer than maxQueued bytes are
// queued (a frame larger than that goes alone). It gives up, returning
// false, when the writer is closed.
func (w *writer) enqueueWait(frame []byte) bool {
	w.mu.Lock()
	for q, _ := w.queuedLocked(); q > 0 && q+len(frame) > maxQueued && !w.closed; q, _ = w.queuedLocked() {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.appendLocked(frame)
	w.kickLocked()
	w.mu.Unlock()
	return true
}

// tryEnqueue is enqueue if fewer than maxQueued bytes are queued (or none,
// for a frame larger than that); it returns false, queueing nothing, when
// enqueueWait would wait. A closed writer takes and drops the frame.
func (w *writer) tryEnqueue(frame []byte) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return true
	}
	if q, _ := w.queuedLocked(); q > 0 && q+len(frame) > maxQueued {
		w.mu.Unlock()
		return false
	}
	w.appendLocked(frame)
	if !w.writeNowLocked() {
		w.kickLocked()
	}
	w.mu.Unlock()
	return true
}

// close wakes every enqueueWait for good.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
}

// span is a frame's place in a batch: bytes [off, end) of buf.
type span struct{ off, end int }

// slot is where an enqueued frame waits: its batch number and place.
type slot struct {
	gen uint64
	span
}

// enqueue appends frame to the next batch and returns where it waits.
func (w *writer) enqueue(frame []byte) slot {
	w.mu.Lock()
	s := w.appendLocked(frame)
	if !w.writeNowLocked() {
		w.kickLocked()
	}
	w.mu.Unlock()
	return s
}

// enqueueFrame is enqueue of f's frame, which the writer takes over: f
// goes back to framePool, or, at sealAt bytes or more, its buffer becomes
// a batch of the writer's, not copied (adoptLocked).
func (w *writer) enqueueFrame(f *frameBuf) slot {
	if len(f.b) < sealAt {
		s := w.enqueue(f.b)
		putFrame(f)
		return s
	}
	w.mu.Lock()
	s := w.adoptLocked(f.b)
	f.b = nil // the writer's now; f is not pooled without it
	if !w.writeNowLocked() {
		w.kickLocked()
	}
	w.mu.Unlock()
	return s
}

// adoptLocked is appendLocked of a frame of sealAt bytes or more that the
// writer may keep: the frame's own buffer becomes the next batch, after
// the queued frames (sealed), instead of being copied into buf. The copy
// ran under mu: under load (16 callers of 2 MiB requests over tcp, -race,
// two busy loops on 2 CPUs) each took 30 ms to 1 s, the callers queued
// for mu one behind the other for up to 1.9 s, the writer behind them,
// and every call timed out withdrawn before the writer could take the
// first batch (fix-dw). On mu.
func (w *writer) adoptLocked(frame []byte) slot {
	if len(w.buf) > 0 {
		w.sealLocked()
	}
	if w.buf != nil {
		w.pushSpare(w.buf)
	}
	w.buf = frame
	w.frames++
	w.addUnsent(int64(len(frame)))
	return slot{gen: w.gen, span: span{0, len(frame)}}
}

// sealLocked makes buf a sealed batch; the next frame starts a new one.
// On mu.
func (w *writer) sealLocked() {
	w.sealed = append(w.sealed, batch{buf: w.buf, frames: w.frames, gen: w.gen, cut: w.cut})
	w.sealedBytes += len(w.buf)
	w.sealedFrames += w.frames
	w.buf, w.frames, w.cut = nil, 0, nil
	w.gen++
}

func (w *writer) appendLocked(frame []byte) slot {
	if len(w.buf) >= sealAt && w.running {
		// The writer is busy: buf waits sealed, the frame starts the
		// next batch.
		w.sealLocked()
	}
	if w.buf == nil {
		w.buf = w.popSpare()
	}
	off := len(w.buf)
	w.buf = append(w.buf, frame...)
	w.frames++
	w.addUnsent(int64(len(frame)))
	return slot{gen: w.gen, span: span{off, len(w.buf)}}
}

// withdraw removes the frame enqueued at s if the writer has not taken its
// batch yet, and reports whether it did (or the writer is closed, so the
// frame will never be written either). A false answer means the frame was
// handed to the transport and may reach the peer. Call it at most once per
// slot.
func (w *writer) withdraw(s slot) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.gen == w.gen {
		if !w.closed { // no batch is taken after close
			w.cut = append(w.cut, s.span)
			w.frames--
		}
		return true
	}
	if len(w.sealed) == 0 || s.gen < w.sealed[0].gen {
		return false // taken
	}
	if !w.closed {
		b := &w.sealed[s.gen-w.sealed[0].gen]
		b.cut = append(b.cut, s.span)
		b.frames--
		w.sealedFrames--
	}
	return true
}

// compact removes the withdrawn frames cut from buf.
func compact(buf []byte, cut []span) []byte {
	slices.SortFunc(cut, func(a, b span) int { return a.off - b.off })
	n, from := 0, 0
	for _, c := range cut {
		n += copy(buf[n:], buf[from:c.off])
		from = c.end
	}
	n += copy(buf[n:], buf[from:])
	return buf[:n]
}

// writeNowLocked writes the one queued frame from the calling goroutine
// when the stream can write without waiting (spi.TryWriter), no writer
// goroutine runs and no other frame is coming (Channel.coming): no
// goroutine to start per frame at one caller, and no wait on a peer that
// stopped reading — what the socket does not take at once goes to a
// writer goroutine. With other frames coming it leaves the frame to the
// writer goroutine, whose batch they join (one write(2) per frame at c=100
// cost 45 % of the consumer's CPU). It reports whether it took the frame;
// mu is held on entry and on return.
func (w *writer) writeNowLocked() bool {
	if w.try == nil || w.running || w.held || w.closed || w.frames != 1 || len(w.sealed) > 0 || w.c.coming(1) > 0 {
		return false
	}
	w.tryWriteLocked()
	return true
}

// tryWriteLocked writes the queued batch through w.try from the calling
// goroutine, handing what the socket does not take at once to a writer
// goroutine; no writer may be running. mu is held on entry and on return.
func (w *writer) tryWriteLocked() {
	w.running = true
	out, frames, gen := w.take()
	w.mu.Unlock()
	c := w.c
	c.noteWrite(frames)
	n, err := w.try.TryWrite(out)
	w.took(n, len(out))
	switch {
	case err != nil:
		c.writeFailed(err)
		w.mu.Lock()
		w.running = false
	case n == len(out):
		w.flushed.Store(gen)
		c.sent(n)
		w.mu.Lock()
		w.pushSpare(out)
		w.running = false
		w.kickLocked() // frames queued meanwhile
	default:
		// The socket took part of it (or none): the rest goes next, from
		// a writer goroutine, which then writes whatever else is queued.
		if !c.goIO(func() { w.finish(out[n:], gen, len(out)) }) {
			w.mu.Lock()
			w.running = false
			return // the channel is dying: nothing more is written
		}
		w.mu.Lock()
	}
}

// finish writes the rest of batch gen, of size bytes in all, then goes
// on as the writer goroutine (running is true on entry).
func (w *writer) finish(rest []byte, gen uint64, size int) {
	if err := w.writeOut(rest, size); err != nil {
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
		w.c.writeFailed(err)
		return
	}
	w.flushed.Store(gen)
	w.c.sent(size)
	w.write(true)
}

// writeChunk is the most a writer hands the stream in one Write, so that
// a slow consumer's progress shows in wrote (slowconsumer.go) before a
// whole batch of large answers has been taken; batches of small frames
// are written in one Write as before.
const writeChunk = 64 << 10

// writeOut writes p, the end of a batch of size bytes, to the stream,
// writeChunk at a time, counting each chunk (took).
func (w *writer) writeOut(p []byte, size int) error {
	for len(p) > 0 {
		n := min(len(p), writeChunk)
		if _, err := w.out.Write(p[:n]); err != nil {
			return err
		}
		w.took(n, size)
		p = p[n:]
	}
	return nil
}

// took counts n bytes the stream took of a write of size bytes in wrote,
// and stamps bulkAt when that write is over writeChunk: one clock read
// and one store per chunk of a large write, none for a small one.
func (w *writer) took(n, size int) {
	w.wrote.Add(int64(n))
	if size > writeChunk && n > 0 {
		w.bulkAt.Store(time.Now().UnixNano())
	}
}

// kickLocked starts the writer goroutine if frames wait, the stream is
// there and no writer runs. On mu.
func (w *writer) kickLocked() {
	if w.running || w.held || w.out == nil || len(w.buf) == 0 && len(w.sealed) == 0 || w.closed {
		return
	}
	if w.running = w.c.goIO(w.run); !w.running {
		w.closed = true // the channel is dying: nothing will be written
		w.room.Broadcast()
	}
}

// hold keeps queued frames from being written while on is true, and
// writes them once it is false (Options.Direct).
//
// Releasing writes what is queued from the calling goroutine (the reader:
// Netty's I/O thread writing at read-complete) when no writer goroutine
// runs, so a direct-dispatch request costs no goroutine hand-off at all;
// through spi.TryWriter when the stream has it, so the reader never waits
// on a consumer that reads slowly.
func (w *writer) hold(on bool) {
	w.mu.Lock()
	if w.held == on {
		w.mu.Unlock()
		return
	}
	w.held = on
	if on {
		w.mu.Unlock()
		return
	}
	w.writeQueuedUnlock()
}

// flushHeld writes the frames queued so far while the writer holds them
// (Options.Direct), from the calling goroutine as hold(false) does, and
// keeps holding the frames queued after them.
func (w *writer) flushHeld() {
	w.mu.Lock()
	if !w.held {
		w.mu.Unlock()
		return
	}
	w.writeQueuedUnlock()
}

// writeQueuedUnlock writes what is queued from the calling goroutine when
// no writer goroutine runs (hold(false), flushHeld): through spi.TryWriter
// when the stream has it, so the reader never waits on a consumer that
// reads slowly and goes back to reading at once. mu is held on entry and
// released on return.
func (w *writer) writeQueuedUnlock() {
	if w.running || w.out == nil || len(w.buf) == 0 && len(w.sealed) == 0 || w.closed {
		w.mu.Unlock()
		return
	}
	if w.try != nil {
		w.tryWriteLocked()
		w.mu.Unlock()
		return
	}
	w.running = true
	w.mu.Unlock()
	w.write(false)
}

// release is hold(false) for a goroutine that must not write: the
// adaptive watchdog (Channel.handOff), which serves every channel of its
// worker pool. The held frames go to a writer goroutine; written from the
// watchdog, on a session without spi.TryWriter, a consumer that read
// nothing blocked it in that write, holding its lock, and every other
// consumer's next request on a reader waited for it (watchdog.watch).
func (w *writer) release() {
	w.mu.Lock()
	w.held = false
	w.kickLocked()
	w.mu.Unlock()
}

// start sets the long-lived stream the writer writes to, and writes what
// was queued before it.
func (w *writer) start(s io.Writer, c *Channel) {
	w.mu.Lock()
	w.out, w.c = s, c
	w.try, _ = s.(spi.TryWriter)
	w.kickLocked()
	w.mu.Unlock()
}

// drained reports whether every frame enqueued so far has been written.
func (w *writer) drained() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf) == 0 && len(w.sealed) == 0 && w.flushed.Load() == w.gen-1
}

// written reports whether batch gen has been written in full.
func (w *writer) written(gen uint64) bool { return gen != 0 && w.flushed.Load() >= gen }

// Written batches' buffers are reused for the next batches, of any
// writer, through batchPool: a batch grown from nothing by append cost 3 %
// of the consumer's CPU at c=10,000 (runtime.growslice under
// appendLocked). They were kept per writer (up to four of up to 1 MiB
// each), and a writer took one as its empty next batch at once: each
// connection whose consumer never read kept about 1.3 MB of empty buffers
// after a burst of answers under 64 KiB, none of it counted in unsent
// (250 such connections: 324 MB of heap in use in writer.appendLocked,
// unsent 0; tester71 #1). Now a writer holds a buffer only while frames
// are queued in it or being written, and the pool's idle buffers are
// freed by the collector.
var batchPool sync.Pool // *[]byte, empty, capacity minBatch to maxBatch

// minBatch and maxBatch bound the capacity of the buffers batchPool keeps:
// a batch's buffer starts at minBatch, and one grown over maxBatch (a huge
// batch) is not kept alive.
const (
	minBatch = 4 << 10
	maxBatch = 1 << 20
)

// pushSpare puts buf, a written batch, back in batchPool unless its
// capacity is out of [minBatch, maxBatch].
func (w *writer) pushSpare(buf []byte) {
	if c := cap(buf); c < minBatch || c > maxBatch {
		return
	}
	p := holderPool.Get().(*[]byte)
	*p = buf[:0]
	batchPool.Put(p)
}

// popSpare returns an empty buffer for a new batch: a pooled one, or a
// new one of minBatch.
func (w *writer) popSpare() []byte {
	p, _ := batchPool.Get().(*[]byte)
	if p == nil {
		return make([]byte, 0, minBatch)
	}
	buf := *p
	*p = nil
	holderPool.Put(p)
	return buf
}

// take takes the oldest queued batch, withdrawn frames cut out. On mu.
func (w *writer) take() (out []byte, frames int64, gen uint64) {
	if len(w.sealed) > 0 {
		b := w.sealed[0]
		w.sealed[0] = batch{}
		if w.sealed = w.sealed[1:]; len(w.sealed) == 0 {
			w.sealed = nil
		}
		w.sealedBytes -= len(b.buf)
		w.sealedFrames -= b.frames
		if len(b.cut) > 0 {
			n := len(b.buf)
			b.buf = compact(b.buf, b.cut)
			w.addUnsent(int64(len(b.buf) - n)) // withdrawn: never sent
		}
		w.room.Broadcast()
		return b.buf, b.frames, b.gen
	}
	if len(w.cut) > 0 {
		n := len(w.buf)
		w.buf = compact(w.buf, w.cut)
		w.cut = w.cut[:0]
		w.addUnsent(int64(len(w.buf) - n)) // withdrawn: never sent
	}
	out, frames, gen = w.buf, w.frames, w.gen
	w.buf, w.frames = nil, 0 // the next frame takes a buffer (appendLocked)
	w.gen++
	w.room.Broadcast()
	return out, frames, gen
}

// maxYields bounds the yields of the writer before it takes a batch.
const maxYields = 8

// joinableLocked reports whether a frame enqueued now would join the
// batch the writer takes next: no sealed batch is before it and it is
// under sealAt bytes (appendLocked seals a batch of sealAt bytes while the
// writer runs). On mu.
func (w *writer) joinableLocked() bool { return len(w.sealed) == 0 && len(w.buf) < sealAt }

// run writes batches until nothing is queued, then exits; a write error
// kills the channel.
func (w *writer) run() { w.write(true) }

// write writes batches until nothing is queued; running is true on entry
// and false on return. Without yield it takes each batch at once (the
// caller has its own work to get back to).
func (w *writer) write(yield bool) {
	var prev []byte // the batch just written, the next one's buffer
	for {
		w.mu.Lock()
		w.pushSpare(prev)
		if yield {
			// Let the frames that are coming (Channel.coming: callers
			// encoding, handlers running) join this batch, yielding up to
			// maxYields times: a write(2) costs more than a few yields.
			// Not once the batch is full (joinable): the frames coming
			// would start the next one, and under CPU starvation each
			// yield took a scheduler round (16 callers encoding 2 MiB
			// requests: 8 yields took 2.6 s, the full batch waited, and
			// every call timed out withdrawn, none written).
			for i := 0; i < maxYields && w.joinableLocked() && w.c.coming(w.frames) > 0; i++ {
				w.mu.Unlock()
				runtime.Gosched()
				w.mu.Lock()
			}
		}
		if w.closed || len(w.buf) == 0 && len(w.sealed) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		out, frames, gen := w.take()
		w.mu.Unlock()
		if len(out) == 0 {
			w.flushed.Store(gen) // every frame was withdrawn: nothing to write is written
			w.c.sent(0)
		} else {
			c := w.c
			c.noteWrite(frames)
			if err := w.writeOut(out, len(out)); err != nil {
				w.mu.Lock()
				w.running = false
				w.mu.Unlock()
				c.writeFailed(err)
				return
			}
			w.flushed.Store(gen)
			c.sent(len(out))
		}
		prev = out
	}
}

// Frame bodies read from the wire come from size-class pools (powers of
// two, 512 B to maxPooledFrame) and go back once decoded: the consumer's
// after its call completes, the provider's after its handler returns.
// Codecs copy what they decode (spi.Decoder), so nothing keeps a body.
const minPooledBody = 512

var bodyPools [8]sync.Pool // 512 B << 0..7 = 512 B .. 64 KiB

// bodyClass returns the pool index for a body of n bytes, or -1 when n is
// over maxPooledFrame.
func bodyClass(n int) int {
	if n > maxPooledFrame {
		return -1
	}
	if n <= minPooledBody {
		return 0
	}
	return bits.Len(uint(n-1)) - bits.Len(minPooledBody-1)
}

// getBody returns a buffer of length n.
func getBody(n int) []byte {
	i := bodyClass(n)
	if i < 0 {
		return make([]byte, n)
	}
	if p, _ := bodyPools[i].Get().(*[]byte); p != nil {
		b := (*p)[:n]
		*p = nil
		holderPool.Put(p)
		return b
	}
	return make([]byte, n, minPooledBody<<i)
}

// holderPool recycles the *[]byte holders the body pools store, so putting
// a body back allocates nothing.
var holderPool = sync.Pool{New: func() any { return new([]byte) }}

// putBody returns a buffer from getBody; b must not be used afterwards.
func putBody(b []byte) {
	c := cap(b)
	if c < minPooledBody || c > maxPooledFrame || c&(c-1) != 0 {
		return
	}
	p := holderPool.Get().(*[]byte)
	*p = b[:0]
	bodyPools[bodyClass(c)].Put(p)
}

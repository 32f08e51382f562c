package exchange

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
)

// ownStreamThreshold is the body size above which a frame gets a stream of
// its own on a multiplexed session, so a large body does not hold up the
// small frames pipelined behind it (issue 3: "say over 64 KiB").
const ownStreamThreshold = 64 << 10

// frameBuf is a growable frame under construction: HeaderLen bytes reserved
// for the header, then the body the codec's encoder appends. It implements
// io.Writer, io.ByteWriter and io.StringWriter so encoders need no adapter.
type frameBuf struct{ b []byte }

func (f *frameBuf) Write(p []byte) (int, error) { f.b = append(f.b, p...); return len(p), nil }

func (f *frameBuf) WriteByte(c byte) error { f.b = append(f.b, c); return nil }

func (f *frameBuf) WriteString(s string) (int, error) { f.b = append(f.b, s...); return len(s), nil }

// maxPooledFrame caps the capacity of buffers returned to the pool, so one
// 8 MiB frame does not pin 8 MiB per pooled buffer.
const maxPooledFrame = 64 << 10

var framePool = sync.Pool{New: func() any { return &frameBuf{b: make([]byte, 0, 512)} }}

// getFrame returns a buffer with the header space reserved.
func getFrame() *frameBuf {
	f := framePool.Get().(*frameBuf)
	f.b = f.b[:protocol.HeaderLen]
	return f
}

func putFrame(f *frameBuf) {
	if cap(f.b) > maxPooledFrame {
		return
	}
	framePool.Put(f)
}

// writer coalesces frames for one long-lived stream: callers append encoded
// frames to a shared buffer and poke the writer goroutine, which yields once
// (so callers that are already runnable can join the batch), swaps buffers
// and writes the whole batch with one Write. This is the write-coalescing
// writer of issue 3, in the spirit of Netty's flush consolidation.
//
// Batches are numbered; a frame knows the batch it joined, and flushed is the
// last batch fully written, which tells a timed-out call whether its request
// had left (SERVER_TIMEOUT) or not (CLIENT_TIMEOUT).
type writer struct {
	mu     sync.Mutex
	room   sync.Cond // on mu: broadcast when a batch is taken or the writer closes
	buf    []byte    // frames waiting for the next write
	frames int64     // number of frames in buf
	gen    uint64    // batch number of buf; starts at 1
	closed bool      // the channel died: nothing will be written any more

	signal  chan struct{} // cap 1: buf is not empty
	flushed atomic.Uint64 // last batch number fully written
}

// maxQueued bounds the bytes a provider response waits behind: a peer that
// stops reading makes handlers block in enqueueWait instead of growing the
// buffer without limit.
const maxQueued = 4 << 20

func newWriter() *writer {
	w := &writer{gen: 1, signal: make(chan struct{}, 1)}
	w.room.L = &w.mu
	return w
}

// enqueueWait is enqueue after waiting until fewer than maxQueued bytes are
// queued (a frame larger than that goes alone). It gives up, returning
// false, when the writer is closed.
func (w *writer) enqueueWait(frame []byte) bool {
	w.mu.Lock()
	for len(w.buf) > 0 && len(w.buf)+len(frame) > maxQueued && !w.closed {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.appendLocked(frame)
	w.mu.Unlock()
	w.poke()
	return true
}

// close wakes every enqueueWait for good.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
}

// enqueue appends frame to the next batch and returns the batch number.
func (w *writer) enqueue(frame []byte) uint64 {
	w.mu.Lock()
	gen := w.appendLocked(frame)
	w.mu.Unlock()
	w.poke()
	return gen
}

func (w *writer) appendLocked(frame []byte) uint64 {
	w.buf = append(w.buf, frame...)
	w.frames++
	return w.gen
}

// poke wakes the writer goroutine.
func (w *writer) poke() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// drained reports whether every frame enqueued so far has been written.
func (w *writer) drained() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.buf) == 0 && w.flushed.Load() == w.gen-1
}

// written reports whether batch gen has been written in full.
func (w *writer) written(gen uint64) bool { return gen != 0 && w.flushed.Load() >= gen }

// loop writes batches to s until dying is closed or a write fails; it
// returns the write error (nil when dying).
func (w *writer) loop(s io.Writer, dying <-chan struct{}, c *Channel) error {
	var spare []byte
	for {
		select {
		case <-w.signal:
		case <-dying:
			return nil
		}
		runtime.Gosched() // let already-runnable callers join this batch
		w.mu.Lock()
		out, frames, gen := w.buf, w.frames, w.gen
		w.buf, w.frames = spare[:0], 0
		w.gen++
		w.room.Broadcast()
		w.mu.Unlock()
		if len(out) == 0 {
			w.flushed.Store(gen) // nothing to write is written
			spare = out
			continue
		}
		// stamped and counted before the write, so that whoever reads the
		// answer to one of these frames already sees it
		c.lastWrite.Store(time.Now().UnixNano())
		c.framesWritten.Add(frames)
		c.writes.Add(1)
		if _, err := s.Write(out); err != nil {
			return err
		}
		w.flushed.Store(gen)
		if cap(out) > 1<<20 {
			out = nil // do not keep a huge batch buffer alive
		}
		spare = out
	}
}

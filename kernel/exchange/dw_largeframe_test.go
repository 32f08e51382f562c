package exchange

import (
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// A large request over a session that is not multiplexed (tcp) joins the
// writer's queue under its lock. It used to be copied into the writer's
// batch there: under load (16 callers of 2 MiB requests, -race, two busy
// loops on 2 CPUs) a copy took 30 ms to 1 s, the callers queued for the
// lock for up to 1.9 s, the writer behind them, and all 16 calls of
// TestT2_LargeRequestsToAStalledProvider/tcp timed out withdrawn before
// the writer took its first batch (fix-dw). Now the request's own buffer
// is the batch the stream gets.

// singleStream is a session that is not multiplexed (only Multiplexed is
// called here).
type singleStream struct{ spi.Session }

func (singleStream) Multiplexed() bool { return false }

// firstByteOut is a stream that takes every write at once and keeps the
// address of the first byte of the first write.
type firstByteOut struct {
	mu    sync.Mutex
	first *byte
	n     int
}

func (o *firstByteOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.first == nil && len(p) > 0 {
		o.first = &p[0]
	}
	o.n += len(p)
	return len(p), nil
}

// TestSendRequest_LargeFrameIsNotCopied: a request frame of sealAt bytes
// (and one of 2 MiB) reaches the stream in the buffer it was encoded in.
func TestSendRequest_LargeFrameIsNotCopied(t *testing.T) {
	for _, size := range []int{sealAt, 2 << 20} {
		c := &Channel{w: newWriter(), sess: singleStream{}}
		c.io.c = c
		c.live.Add(1) // the channel's own count: it never finishes here
		out := &firstByteOut{}
		c.w.start(out, c)
		f := getFrame()
		f.b = append(f.b, make([]byte, size-protocol.HeaderLen)...)
		encoded := &f.b[0]
		s := c.sendRequest(f)
		if !waitFor(5*time.Second, func() bool { return c.w.written(s.slot.gen) }) {
			t.Fatalf("%d bytes: the writer never wrote the frame", size)
		}
		c.io.Wait() // the writer goroutine exits once nothing is queued
		out.mu.Lock()
		if out.n != size {
			t.Errorf("%d bytes: the stream got %d bytes", size, out.n)
		}
		if out.first != encoded {
			t.Errorf("%d bytes: the stream got a copy of the request frame, made under the writer's lock; want the buffer it was encoded in", size)
		}
		out.mu.Unlock()
	}
}

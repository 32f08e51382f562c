package exchange

import (
	"runtime"
	"sync"
	"testing"
)

// The writer yields before taking a batch so that frames being encoded
// join it (write, maxYields), but a batch of sealAt bytes or more takes no
// more frames. Under load (two busy loops beside the race-enabled test
// binary on 2 CPUs) each yield took a scheduler round while 15 other
// callers encoded their 2 MiB requests: the writer yielded 8 times in
// 2.6 s with a full 2 MiB batch queued, and all 16 calls of
// TestT2_LargeRequestsToAStalledProvider timed out withdrawn, none
// written (fix-ds).

// recordingOut is a stream that takes every write at once and counts the
// bytes.
type recordingOut struct {
	mu sync.Mutex
	n  int
}

func (r *recordingOut) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n += len(p)
	return len(p), nil
}

func (r *recordingOut) written() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// TestWriter_FullBatchIsNotHeldForFramesComing: on one P, a frame of
// sealAt bytes is enqueued while another caller is still encoding (its call
// counts in Channel.coming). The writer takes it at its first run: the
// test goroutine, which yields until the stream got the frame, runs again
// at most a few times (a preemption), not once per writer yield.
func TestWriter_FullBatchIsNotHeldForFramesComing(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	c := &Channel{w: newWriter()}
	c.io.c = c
	c.live.Add(1)  // the channel's own count: it never finishes here
	c.calls.Add(2) // the full frame's call, and one still encoding
	out := &recordingOut{}
	c.w.start(out, c)
	frame := make([]byte, sealAt)
	c.w.enqueue(frame) // no TryWriter: the writer goroutine is started
	turns := 0
	for out.written() < len(frame) {
		if turns++; turns > 1000 {
			t.Fatal("the writer never wrote the frame")
		}
		runtime.Gosched()
	}
	c.io.Wait() // the writer goroutine exits once nothing is queued
	if n := turns; n > maxYields/2 {
		t.Fatalf("the stream got the full batch after the test goroutine yielded %d times; want at most %d: the writer yielded for frames that could not join it", n, maxYields/2)
	}
}

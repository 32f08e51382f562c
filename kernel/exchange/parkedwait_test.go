package exchange

import (
	"bufio"
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// A request parked while its consumer's answers were unsent over
// highWater waits for a worker from when it is put back, not from its
// arrival. Under load, TestAbuse1_ReadingConsumerLargeAnswersComplete saw
// a Payload call parked about 2 s refused SERVER_THREADPOOL_EXHAUSTED as
// having "waited 2.073s for a worker, over a tenth of its 20s timeout".
// Here 40 requests for 1 MiB answers (timeout 60 s: a worker bound of
// 6 s) are parked 6.5 s by a consumer that reads nothing, then put back
// while the pool's eight workers are held 1 s: every one is answered. (A
// bound of 2 s was too short under load, two busy loops beside a nice 15
// test: after the held second, the 8 workers took over 2 s more to make
// the 1 MiB answers ahead of the last ones put back.)
func TestWorkerPool_ParkedTimeIsNotAWaitForAWorker(t *testing.T) {
	const (
		requests = 40
		workers  = 8
		answer   = 1 << 20
		timeout  = 60 * time.Second // a worker bound of 6 s
	)
	h := &countingHandler{svc: &echoService{}}
	f := startServer(t, false, func(o *Options) { o.Workers, o.Handler = workers, h })
	c := rawConn(t, f) // its default buffers: a 4 KiB one stalled loopback TCP for 30 s once read again
	var all []byte
	for id := uint64(1); id <= requests; id++ {
		fb := getFrame()
		if err := encodeRequest(fb, mpCodec{}, echoInv("Payload", answer), timeout); err != nil {
			t.Fatal(err)
		}
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
		all = append(all, fb.b...)
	}
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
	waitFor(10*time.Second, func() bool { _, n := serverUnsent(f); return n == 1 })
	ch := oneChannel(t, f)
	if !waitFor(10*time.Second, func() bool { return ch.nParked.Load() > 0 }) {
		t.Fatalf("no request parked behind %d unread answers: %+v", requests, ch.Stats())
	}
	time.Sleep(6500 * time.Millisecond) // parked past their worker bound
	parked := ch.nParked.Load()

	// every worker busy when the consumer reads and the parked requests
	// are put back: they queue for a worker, 1 s and the answers ahead
	other := f.dial(nil)
	held := make(chan error, workers)
	for range workers {
		go func() {
			held <- other.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1000), 10*time.Second).Err
		}()
	}
	if !waitFor(5*time.Second, func() bool { return h.running.Load() == workers }) {
		t.Fatalf("the %d Sleep calls holding the workers did not start (running %d)", workers, h.running.Load())
	}

	br := bufio.NewReaderSize(c, 64<<10)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for n := 0; n < requests; n++ {
		hd, body, err := readFrame(br)
		if err != nil {
			t.Fatalf("after %d answers: %v", n, err)
		}
		if hd.Status != spi.StatusOK {
			t.Fatalf("request %d (%d of %d were parked 6.5 s): status %d: %q", hd.ID, parked, requests, hd.Status, body)
		}
	}
	for range workers {
		if err := <-held; err != nil {
			t.Fatalf("Sleep holding a worker: %v", err)
		}
	}
}

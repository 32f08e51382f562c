package exchange

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester68 F5, what remained after answers not yet known counted at
// payload: while the Server was over its unsent.limit, each channel with
// no handler running still started one (budgetHolds), and with the
// adaptive dispatcher (airnode serve's default) each connection's reader
// ran requests itself, past every bound on answers being made. 40
// connections pipelining requests for 8 MB answers and reading none still
// made 45 to 56 answers at once: 1.2 to 4 GB of heap. Now large answers
// and answers not yet known run on the worker pool, and over the limit at
// most overdraftHandlers handlers start, the whole Server together.

// heavyAnswers makes Payload's value first and holds it 200 ms before
// answering (a method that builds a large answer slowly), counting the
// handlers running at once.
type heavyAnswers struct {
	*echoService
	running, peak atomic.Int64
}

func (s *heavyAnswers) Serve(ctx context.Context, req *Request) spi.Result {
	if req.Method != "Payload" {
		return s.echoService.Serve(ctx, req)
	}
	var n any
	if err := req.Args.Decode(&n); err != nil {
		return spi.Result{Err: err}
	}
	v := bytes.Repeat([]byte{'x'}, toInt(n))
	r := s.running.Add(1)
	defer s.running.Add(-1)
	for p := s.peak.Load(); r > p && !s.peak.CompareAndSwap(p, r); p = s.peak.Load() {
	}
	time.Sleep(200 * time.Millisecond)
	return spi.Result{Value: v}
}

func TestUnsentLimit_SlowReadersMakeFewAnswersAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		adaptive bool
	}{{"adaptive", true}, {"all", false}} {
		t.Run(tc.name, func(t *testing.T) {
			const consumers = 24
			const requests = 6
			const payload = 1 << 20
			const answer = 2 << 20 // made, then refused BAD_RESPONSE: over payload
			const limit = 8 << 20
			svc := &heavyAnswers{echoService: &echoService{}}
			f := startServer(t, false, func(o *Options) {
				o.UnsentLimit = limit
				o.Payload = payload
				o.Adaptive = tc.adaptive
				o.Handler = svc
			})
			canary(t, f, 1) // warm
			before := heapInuse()
			var conns []net.Conn
			for range consumers {
				conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				conn.(*net.TCPConn).SetReadBuffer(4 << 10) // reads nothing
				var all []byte
				for id := range requests {
					all = append(all, requestFrame(t, uint64(id+1), echoInv("Payload", answer))...)
				}
				if _, err := conn.Write(all); err != nil {
					t.Fatal(err)
				}
				conns = append(conns, conn)
			}
			var peakHeap int64
			var ms runtime.MemStats
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				runtime.ReadMemStats(&ms)
				peakHeap = max(peakHeap, int64(ms.HeapInuse)-before)
			}
			// A consumer that reads is served meanwhile.
			worst := canary(t, f, 3)
			// limit/(makingCost*payload) handlers before the first answers,
			// none more after (each counts at 3*2 MiB), overdraftHandlers
			// beyond them, a few slipping past as counts change. Before
			// the fix: 30 (one per connection, and the Server's own).
			const maxRunning = overdraftHandlers + limit/(makingCost*payload) + 4
			// each handler running holds its value, the codec's buffer and
			// the frame, and the collector lets garbage reach as much
			// again: 21 to 25 MiB measured; before the fix 103 to 113 MiB.
			const bound = 4*limit + 2*maxRunning*answer
			t.Logf("%d handlers running at most (bound %d); heap in use grew %.1f MiB at the peak (bound %d MiB); canary %v",
				svc.peak.Load(), maxRunning, float64(peakHeap)/(1<<20), bound>>20, worst)
			if p := svc.peak.Load(); p > maxRunning {
				t.Errorf("%d handlers making %d MiB answers ran at once for %d consumers that read nothing (unsent.limit %d MiB); want at most %d",
					p, answer>>20, consumers, limit>>20, maxRunning)
			}
			if peakHeap > bound {
				t.Errorf("heap in use grew %.1f MiB while %d consumers read nothing (unsent.limit %d MiB); want at most %d MiB",
					float64(peakHeap)/(1<<20), consumers, limit>>20, bound>>20)
			}
			// No handler waits for budget once the connections are gone.
			for _, c := range conns {
				c.Close()
			}
			b := f.srv.opts.budget
			deadline := time.Now().Add(10 * time.Second)
			for b.making.Load() != 0 || b.overdraft.Load() != 0 || b.held.Load() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("10 s after the consumers closed: making %d, overdraft %d, held %d; want 0",
						b.making.Load(), b.overdraft.Load(), b.held.Load())
				}
				time.Sleep(20 * time.Millisecond)
			}
			canary(t, f, 2)
		})
	}
}

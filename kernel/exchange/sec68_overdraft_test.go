package exchange

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"runtime/metrics"
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
	started       atomic.Int64 // Payload handlers started so far
}

func (s *heavyAnswers) Serve(ctx context.Context, req *Request) spi.Result {
	if req.Method != "Payload" {
		return s.echoService.Serve(ctx, req)
	}
	var n any
	if err := req.Args.Decode(&n); err != nil {
		return spi.Result{Err: err}
	}
	s.started.Add(1)
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
			liveBefore := heapLive()
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
			var peakHeap, peakLive int64
			var ms runtime.MemStats
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				runtime.ReadMemStats(&ms)
				peakHeap = max(peakHeap, int64(ms.HeapInuse)-before)
				peakLive = max(peakLive, heapLive()-liveBefore)
			}
			remaining := consumers*requests - svc.started.Load()
			// A consumer that reads is served meanwhile: before the
			// handlers of the requests still waiting have all started.
			worst, ahead := readerTurn(t, f, svc, 3)
			// limit/(makingCost*payload) handlers before the first answers,
			// none more after (each counts at 3*2 MiB), overdraftHandlers
			// beyond them, a few slipping past as counts change. Before
			// the fix: 30 (one per connection, and the Server's own).
			const maxRunning = overdraftHandlers + limit/(makingCost*payload) + 4
			// each handler running holds its value, the codec's buffer and
			// the frame, and the collector lets garbage reach as much
			// again: 21 to 25 MiB of heap in use measured; before the fix
			// 103 to 113 MiB. The bound is on the heap live at the last
			// collection: with two CPUs at load 12 under -race the
			// collector lagged and the heap in use (garbage included)
			// reached 94 MiB with at most 8 handlers running.
			const bound = 4*limit + 2*maxRunning*answer
			t.Logf("%d handlers running at most (bound %d); live heap grew %.1f MiB at the peak (bound %d MiB), heap in use %.1f MiB; a reading consumer's call took %v, %d of %d handlers to start started ahead of it",
				svc.peak.Load(), maxRunning, float64(peakLive)/(1<<20), bound>>20, float64(peakHeap)/(1<<20), worst, ahead, remaining)
			// Before its turn came (the handlers of unread answers wait
			// in the overdraft), it waited for 25 to 88 of the about 110
			// requests still to start under load, the channels that
			// read nothing in no order; one never served until they all
			// ran would have all of them ahead.
			if ahead >= remaining {
				t.Errorf("a consumer that reads was answered after all %d requests of the consumers that read nothing started (%d); want it served meanwhile",
					remaining, ahead)
			}
			if p := svc.peak.Load(); p > maxRunning {
				t.Errorf("%d handlers making %d MiB answers ran at once for %d consumers that read nothing (unsent.limit %d MiB); want at most %d",
					p, answer>>20, consumers, limit>>20, maxRunning)
			}
			if peakLive > bound {
				t.Errorf("live heap grew %.1f MiB while %d consumers read nothing (unsent.limit %d MiB); want at most %d MiB",
					float64(peakLive)/(1<<20), consumers, limit>>20, bound>>20)
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

// readerTurn makes calls calls of Echo on a new connection to f (a
// consumer that reads its answers) one after the other, and returns the
// longest one took and the most Payload handlers of svc that started
// while one waited. Each may wait a minute: under -race on a loaded
// machine a turn among 24 connections took over 10 s.
func readerTurn(t *testing.T, f *fixture, svc *heavyAnswers, calls int) (worst time.Duration, ahead int64) {
	t.Helper()
	ch := f.dial(nil)
	for i := range calls {
		start, before := time.Now(), svc.started.Load()
		res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", fmt.Sprint(i)), time.Minute)
		if res.Err != nil || res.Value != fmt.Sprint(i) {
			t.Fatalf("call %d of a consumer that reads while others do not: %v %v", i, res.Value, res.Err)
		}
		worst, ahead = max(worst, time.Since(start)), max(ahead, svc.started.Load()-before)
	}
	return worst, ahead
}

// heapLive returns the heap live at the end of the last collection
// (runtime/metrics /gc/heap/live:bytes): what the program held, without
// the garbage a collector slowed by a loaded machine has not freed yet.
func heapLive() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

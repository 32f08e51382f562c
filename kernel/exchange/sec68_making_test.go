package exchange

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// tester68 F5: 40 connections that pipelined 50 requests each for 8 MB
// answers and read none took airnode serve to 9.5 GB of heap with
// unsent.limit at its default, airnode_unsent_limit_stalls_total 0. Two
// holes: before a channel's first answer its handlers counted in the
// Server's making at highWater/firstAnswers (512 KiB), so 512 of them
// filled the limit and every worker started one (256 answers at once);
// and an answer over payload was noted at the size of the BAD_RESPONSE
// sent for it (200 bytes), so the channel's answers looked small and
// neither bound held it again. A handler whose channel has not answered
// yet now counts at the channel's payload (for its first unknownWait),
// and an answer at the size it was made.

// countingAnswers is echoService whose answers take 300 ms to make (as
// large answers do on a loaded machine), counting the handlers running
// at once.
type countingAnswers struct {
	*echoService
	running, peak atomic.Int64
}

func (s *countingAnswers) Serve(ctx context.Context, req *Request) spi.Result {
	if req.Method == "Payload" {
		n := s.running.Add(1)
		defer s.running.Add(-1)
		for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
		}
		time.Sleep(300 * time.Millisecond)
	}
	return s.echoService.Serve(ctx, req)
}

// heapInuse returns the heap in use after a collection.
func heapInuse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// pipelineUnread opens consumers raw TCP connections that each pipeline
// requests Payload(answer) requests and read nothing.
func pipelineUnread(t *testing.T, f *fixture, consumers, requests, answer int) {
	t.Helper()
	for range consumers {
		conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.(*net.TCPConn).SetReadBuffer(4 << 10) // reads nothing, and takes little
		var all []byte
		for id := range requests {
			all = append(all, requestFrame(t, uint64(id+1), echoInv("Payload", answer))...)
		}
		if _, err := conn.Write(all); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnsentLimit_UnknownAnswersCountAtPayload(t *testing.T) {
	const consumers = 8
	const requests = 30
	const answer = 2 << 20
	const limit = 32 << 20
	svc := &countingAnswers{echoService: &echoService{}}
	f := startServer(t, false, func(o *Options) {
		o.UnsentLimit = limit
		o.Handler = svc
	})
	before := heapInuse()
	pipelineUnread(t, f, consumers, requests, answer)
	time.Sleep(2500 * time.Millisecond) // 8 rounds of handlers
	grew := heapInuse() - before
	sum, _ := serverUnsent(f)
	// unsent.limit/payload handlers of answers not yet known, and one per
	// connection beyond them (budgetHolds); a few more may slip past in
	// the first burst. Before the fix: 64 to 128 (16 per connection, the
	// Server's limit reached only at 64 counted at 512 KiB).
	maxRunning := int64(2 * (limit/protocol.DefaultPayload + consumers))
	// the limit twice and an answer per connection (34 MiB measured).
	// Before the fix: 128 MiB unsent, 129 MiB more heap in use.
	bound := int64(2*limit + consumers*answer)
	t.Logf("%d handlers running at most (bound %d); %.1f MiB unsent, heap in use grew %.1f MiB (bound %.1f MiB)",
		svc.peak.Load(), maxRunning, float64(sum)/(1<<20), float64(grew)/(1<<20), float64(bound)/(1<<20))
	if p := svc.peak.Load(); p > maxRunning {
		t.Errorf("%d handlers ran at once for %d consumers that read nothing (unsent.limit %d MiB, answers not yet known); want at most %d",
			p, consumers, limit>>20, maxRunning)
	}
	if sum > bound {
		t.Errorf("%.1f MiB unsent, want at most %.1f MiB", float64(sum)/(1<<20), float64(bound)/(1<<20))
	}
	if grew > bound {
		t.Errorf("heap in use grew %.1f MiB, want at most %.1f MiB", float64(grew)/(1<<20), float64(bound)/(1<<20))
	}
	canary(t, f, 5)
}

func TestUnsentLimit_OverPayloadAnswersCount(t *testing.T) {
	const consumers = 8
	const requests = 30
	const payload = 1 << 20
	const answer = 2 << 20 // made, then refused BAD_RESPONSE: over payload
	const limit = 8 << 20
	svc := &countingAnswers{echoService: &echoService{}}
	f := startServer(t, false, func(o *Options) {
		o.UnsentLimit = limit
		o.Payload = payload
		o.Handler = svc
	})
	pipelineUnread(t, f, consumers, requests, answer)
	time.Sleep(2500 * time.Millisecond)
	// limit/payload handlers before the first answers, limit/answer after,
	// and one per connection beyond them. Before the fix: the refusals
	// noted at 200 bytes let every request run, 16 per connection first
	// and then all that were left (up to 240).
	maxRunning := int64(2 * (limit/payload + consumers))
	t.Logf("%d handlers running at most (bound %d)", svc.peak.Load(), maxRunning)
	if p := svc.peak.Load(); p > maxRunning {
		t.Errorf("%d handlers making %d MiB answers (over payload %d MiB) ran at once for %d consumers (unsent.limit %d MiB); want at most %d",
			p, answer>>20, payload>>20, consumers, limit>>20, maxRunning)
	}
	if l := f.logs.find("response over payload limit"); l == "" {
		t.Error("no 'response over payload limit' logged: the answers were not over payload")
	}
	canary(t, f, 5)
}

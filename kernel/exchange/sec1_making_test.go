package exchange

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester49 finding 2: six consumers that pipeline 50 requests for large
// answers each and read none made the provider hold 355 MB to 2.5 GB with
// unsent.limit=8MiB: each connection bounded only its own answers being
// made (highWater, and before its first answer firstAnswers handlers,
// doubled every firstAnswerWait), so every connection started many
// handlers ("42 handlers running") before their answers were counted.
// The Server now counts the answers being made against unsent.limit
// (budgetHolds): the heap stays within a few times the limit plus an
// answer per connection and the first burst (firstAnswers answers), and a
// consumer that reads still gets its answers.
// slowAnswers is echoService whose answers take 300 ms to make, as large
// answers do on a loaded machine (longer than firstAnswerWait).
type slowAnswers struct{ *echoService }

func (s slowAnswers) Serve(ctx context.Context, req *Request) spi.Result {
	time.Sleep(300 * time.Millisecond)
	return s.echoService.Serve(ctx, req)
}

func TestUnsentLimit_AnswersBeingMadeCount(t *testing.T) {
	const consumers = 6
	const requests = 50
	const answer = 1 << 20
	const limit = 8 << 20
	f := startServer(t, false, func(o *Options) {
		o.UnsentLimit = limit
		o.Handler = slowAnswers{&echoService{}}
	})
	before := heapAlloc()
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
	// The handlers that start run within milliseconds; sample the heap
	// while they do and after.
	var peak int64
	for range 25 {
		time.Sleep(100 * time.Millisecond)
		peak = max(peak, heapAlloc()-before)
	}
	b := f.srv.opts.budget
	sum, _ := serverUnsent(f)
	// the limit three times over, an answer per connection (each may make
	// one once its consumer read the previous: these never do), and the
	// first burst (firstAnswers handlers at budgetEstimate before any
	// answer); the request bodies and buffers are small. Before the fix:
	// 300 answers, over 300 MiB.
	bound := int64(3*limit + (consumers+firstAnswers)*answer*2)
	t.Logf("heap grew at most %.1f MiB (bound %.1f MiB); %.1f MiB unsent, %.1f MiB counted being made",
		float64(peak)/(1<<20), float64(bound)/(1<<20), float64(sum)/(1<<20), float64(b.making.Load())/(1<<20))
	if peak > bound {
		t.Errorf("heap grew %.1f MiB for %d non-reading consumers with unsent.limit %d MiB; want at most %.1f MiB", float64(peak)/(1<<20), consumers, limit>>20, float64(bound)/(1<<20))
	}
	if sum > bound {
		t.Errorf("%.1f MiB unsent, want at most %.1f MiB", float64(sum)/(1<<20), float64(bound)/(1<<20))
	}
	canary(t, f, 5) // 300 ms each
}

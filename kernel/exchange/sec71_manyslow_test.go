package exchange

import (
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// tester71 #1: 1,000 connections that each pipelined 100 requests for
// 64,002-byte answers (just under budgetFree) and read nothing took
// airnode serve to 1.13 GB of heap with unsent.limit=32MiB: about 1 MB per
// connection whatever the limit. Each writer kept the buffers of its
// written batches (up to four of up to 1 MiB) uncounted, and answers under
// budgetFree were neither counted while made nor stopped before a
// connection held budgetStop. Now the buffers go back to a shared pool
// once written, a connection holding budgetFree stops starting requests
// while the Server is over its limit (overFree), and one whose answers
// are not written for Options.SlowConsumerAfter meanwhile is closed.
func TestUnsentLimit_ManyConnectionsSmallAnswers(t *testing.T) {
	const consumers = 200
	const requests = 80
	const answer = 60_000
	const limit = 4 << 20
	closes := counters.Channels.SlowConsumerCloses.Load()
	f := startServer(t, false, func(o *Options) { o.UnsentLimit = limit })
	before := heapInuse()
	pipelineSame(t, f, consumers, requests, answer)
	sample := func() (heap, unsent int64, chans int) {
		unsent, chans = serverUnsent(f)
		return heapInuse() - before, unsent, chans
	}
	// Once every connection has stopped, nothing runs. Slept 2 s for it
	// before: under -race on a loaded machine the pool still had requests
	// queued for over a second then, and refused the canary's
	// (SERVER_THREADPOOL_EXHAUSTED, in 1 of 4 runs beside two CPU hogs).
	start := time.Now()
	waitPoolIdle(t, f, 30*time.Second)
	if d := canary(t, f, 3); d > 5*time.Second {
		t.Errorf("a call took %v while %d consumers read nothing", d, consumers)
	}
	heap, unsent, chans := sample()
	t.Logf("after %v: %d channels hold %.1f MiB unsent; heap in use grew %.1f MiB", time.Since(start).Round(time.Millisecond), chans, float64(unsent)/(1<<20), float64(heap)/(1<<20))
	// Each connection stops at budgetFree and an answer (or two being made
	// when it stopped), about 140 KiB measured, plus its buffers and
	// connection: 27 MiB unsent and 50-60 MiB of heap measured. Before
	// the fix: 89 MiB unsent, 220 MiB of heap (with 250 connections of 40
	// requests each, nothing unsent and 324 MiB of heap: 1.3 MB of empty
	// batch buffers per connection).
	unsentBound := int64(limit + consumers*192<<10)
	heapBound := int64(limit + consumers*512<<10) // 85 MiB measured under -race
	if unsent > unsentBound {
		t.Errorf("%.1f MiB unsent for %d consumers that read nothing (unsent.limit %d MiB); want at most %.1f MiB",
			float64(unsent)/(1<<20), consumers, limit>>20, float64(unsentBound)/(1<<20))
	}
	if heap > heapBound {
		t.Errorf("heap in use grew %.1f MiB for %d consumers that read nothing (unsent.limit %d MiB); want at most %.1f MiB",
			float64(heap)/(1<<20), consumers, limit>>20, float64(heapBound)/(1<<20))
	}
	// SlowConsumerAfter later, the slow consumers are closed until the
	// Server is under its limit: each look (every slowConsumerCheck) finds
	// those that wrote nothing for SlowConsumerAfter, in turns, as the
	// others make answers again. 15 s was not enough under -race beside
	// two CPU hogs (17 of 200 closed, in 1 of 4 runs); the wait ends as
	// soon as the Server is under its limit.
	within := 12 * DefaultSlowConsumerAfter
	deadline := time.Now().Add(within)
	for f.srv.opts.budget.over() && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	heap, unsent, chans = sample()
	n := counters.Channels.SlowConsumerCloses.Load() - closes
	t.Logf("then: %d slow consumers closed, %d channels hold %.1f MiB unsent; heap in use grew %.1f MiB", n, chans, float64(unsent)/(1<<20), float64(heap)/(1<<20))
	if f.srv.opts.budget.over() {
		t.Errorf("the Server's channels still hold %.1f MiB unread, over unsent.limit %d MiB, %v on", float64(f.srv.opts.budget.held.Load())/(1<<20), limit>>20, within)
	}
	if n == 0 || f.logs.find("slow consumer:") == "" {
		t.Errorf("%d slow consumers closed, log %q; want some closed and logged", n, f.logs.find("slow consumer:"))
	}
	waitPoolIdle(t, f, 30*time.Second)
	canary(t, f, 3)
}

// waitPoolIdle waits until the Server's worker pool has had nothing
// queued and no worker busy for three looks in a row (50 ms apart), for
// at most within (the caller's assertions then tell what was still
// running).
func waitPoolIdle(t *testing.T, f *fixture, within time.Duration) {
	t.Helper()
	p := f.srv.pool
	for end, quiet := time.Now().Add(within), 0; quiet < 3 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		p.mu.Lock()
		idle := p.head == len(p.queue) && p.workers == len(p.idle)
		p.mu.Unlock()
		if quiet++; !idle {
			quiet = 0
		}
	}
}

// A consumer that reads slowly but steadily is not a slow consumer, even
// while others keep the Server over its limit.
func TestUnsentLimit_SteadyReaderNotClosed(t *testing.T) {
	const limit = 1 << 20
	closes := counters.Channels.SlowConsumerCloses.Load()
	f := startServer(t, false, func(o *Options) { o.UnsentLimit = limit })
	conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	var all []byte
	for id := range 200 {
		all = append(all, requestFrame(t, uint64(id+1), echoInv("Payload", 60_000))...)
	}
	if _, err := conn.Write(all); err != nil {
		t.Fatal(err)
	}
	pipelineSame(t, f, 40, 100, 60_000) // keep the Server over its limit
	// about 40 KB/s: far slower than the provider writes, so its answers
	// stay unsent, but some of them are written every second
	got := 0
	buf := make([]byte, 4<<10)
	start := time.Now()
	var ch *Channel
	var held int64 // the most the steady reader's channel held unsent
	for time.Since(start) < 9*time.Second {
		if ch == nil {
			ch = channelOfConn(f, conn)
		} else {
			held = max(held, ch.w.unsent.Load())
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		got += n
		if err != nil {
			t.Fatalf("the steady reader's connection failed after %v, %d bytes read: %v (log: %q)", time.Since(start), got, err, f.logs.find("slow consumer:"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	n := counters.Channels.SlowConsumerCloses.Load() - closes
	t.Logf("read %d bytes in %v, %.1f KiB unsent at most; %d slow consumers closed; over the limit: %v", got, time.Since(start).Round(time.Second), float64(held)/(1<<10), n, f.srv.opts.budget.over())
	if n == 0 {
		t.Error("no consumer that reads nothing was closed")
	}
}

// channelOfConn returns the server's channel of conn (its remote address
// is conn's local one), or nil.
func channelOfConn(f *fixture, conn net.Conn) *Channel {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for c := range f.srv.chans {
		if c.remote == conn.LocalAddr().String() {
			return c
		}
	}
	return nil
}

// pipelineSame is pipelineUnread with the requests encoded once, so that
// opening hundreds of connections costs little under the race detector.
func pipelineSame(t *testing.T, f *fixture, consumers, requests, answer int) {
	t.Helper()
	var all []byte
	for id := range requests {
		all = append(all, requestFrame(t, uint64(id+1), echoInv("Payload", answer))...)
	}
	for range consumers {
		conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.(*net.TCPConn).SetReadBuffer(4 << 10) // reads nothing, and takes little
		if _, err := conn.Write(all); err != nil {
			t.Fatal(err)
		}
	}
}

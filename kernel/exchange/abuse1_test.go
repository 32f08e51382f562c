package exchange

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// tester34 F4: one consumer pipelined 2,000 tiny requests for 1 MB answers
// in one write and read none. Its reader stopped at highWater, but the
// requests it had read all went to the worker pool, and the 256 workers
// started most of them before the first answer was counted: 160 to 256
// answers held (240 to 410 MB of heap, RSS to 490 MB) until it left, and
// `unsent.limit`'s bound did not see it either. Now a worker parks a
// request while the answers unsent and being made reach highWater: the
// connection holds a few answers over highWater, the stall is counted and
// logged, the parked requests are cancelled when the consumer leaves, and
// nothing stays counted.
func TestAbuse1_PipelinedLargeAnswersNotRead(t *testing.T) {
	const requests = 2000
	const answer = 1 << 20
	// a handler that takes 10 ms (a database, a file) to give a
	// ready-made answer: without the bound every worker (256) started one
	// before the first answer was counted, whatever the machine's load
	ready := make([]byte, answer)
	f := startServer(t, false, func(o *Options) { o.Handler = readyAnswer(ready) })
	conn := rawConn(t, f)
	conn.(*net.TCPConn).SetReadBuffer(4096)
	var all []byte
	for id := uint64(1); id <= requests; id++ {
		all = append(all, requestFrame(t, id, echoInv("Payload", answer))...)
	}
	stalls := counters.Channels.Stalls.Load()
	conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(all); err != nil { // about 60 KB: one write
		t.Fatal(err)
	}
	// the peak of what the provider holds for it: answers unsent (queued,
	// being written, or waiting in a goroutine of their own for room),
	// over 2 s and until the stall is counted and logged (once the
	// channel holds budgetFree unsent: under load, two busy loops beside
	// a nice 15 test, 35 handlers had made 1 MiB of answers after 2 s)
	var peak int64
	var firstAnswer int64 // mono() when the channel's first answer was seen counted
	start := time.Now()
	waitFor(10*time.Second, func() bool { _, n := serverUnsent(f); return n == 1 })
	ch := oneChannel(t, f)
	for end := start.Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if sum, _ := serverUnsent(f); sum > peak {
			peak = sum
		}
		if firstAnswer == 0 && ch.answerSize.Load() > 0 {
			firstAnswer = mono()
		}
		if time.Since(start) >= 2*time.Second && ch.stalls.Load() != 0 && f.logs.find("stopped reading from") != "" {
			break
		}
	}
	t.Logf("%d requests of %d-byte answers, not read: peak %.1f MiB unsent, %d parked, %d handlers running",
		requests, answer, float64(peak)/(1<<20), ch.nParked.Load(), ch.answering.Load())
	// highWater, plus the answers of the handlers that may start before
	// the channel's first answer (firstAnswers, doubled for each
	// firstAnswerWait the first answer took: 16 when it came within
	// 100 ms; 50 ran under load, two busy loops beside a nice 15 test,
	// where it took longer), plus a few that started before its unsent
	// reached budgetFree: far under the 179 MiB it was without the bound
	// on answers being made (go test -race)
	waits := int64(0)
	if first := ch.firstAt.Load(); first != 0 && firstAnswer > first {
		waits = (firstAnswer - first) / int64(firstAnswerWait)
	}
	making := firstAnswers << min(waits+1, 4) // +1: the sampling comes up to a tick late
	if waits == 0 {
		making = firstAnswers
	}
	if bound := int64(highWater + (making+8)*answer); peak > bound {
		t.Errorf("the provider holds %.1f MiB of answers for a consumer that reads none, want at most %.1f MiB (highWater %d MiB and %d answers being made: its first answer came after %v)",
			float64(peak)/(1<<20), float64(bound)/(1<<20), highWater>>20, making, time.Duration(firstAnswer-ch.firstAt.Load()).Round(time.Millisecond))
	}
	if counters.Channels.Stalls.Load() == stalls || ch.stalls.Load() == 0 {
		t.Error("the stall was not counted")
	}
	if line := f.logs.find("stopped reading from " + conn.LocalAddr().String()); line == "" {
		t.Errorf("no stopped-reading line; logs: %q", f.logs.lines())
	} else {
		t.Logf("log: %s", line)
	}
	conn.Close()
	if !waitFor(10*time.Second, func() bool { sum, chans := serverUnsent(f); return sum == 0 && chans == 0 }) {
		sum, chans := serverUnsent(f)
		t.Fatalf("after the consumer left: %d channels hold %d bytes unsent", chans, sum)
	}
	if b := f.srv.opts.budget; b != nil && b.held.Load() != 0 {
		t.Errorf("the Server's unsent budget still counts %d bytes", b.held.Load())
	}
}

// A consumer that reads is not held back by the answers-being-made bound:
// 64 concurrent calls for 1 MiB answers on one connection all complete,
// and so do 500 small calls alongside them. The worker pool is unbounded:
// its admission control is not what this tests, and under load (two busy
// loops beside a nice 15 test) the 564 calls at once kept the default 256
// workers busy past a tenth of the 20 s timeout, and an Echo call was
// rightly refused SERVER_THREADPOOL_EXHAUSTED after waiting 2.8 s.
func TestAbuse1_ReadingConsumerLargeAnswersComplete(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Workers = -1 })
	ch := f.dial(nil)
	var wg sync.WaitGroup
	errs := make(chan error, 600)
	for range 64 {
		wg.Go(func() {
			res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Payload", 1<<20), 20*time.Second)
			if res.Err != nil {
				errs <- res.Err
			} else if b, _ := res.Value.([]byte); len(b) != 1<<20 {
				errs <- &net.AddrError{Err: "short answer"}
			}
		})
	}
	for range 500 {
		wg.Go(func() {
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 20*time.Second); res.Err != nil {
				errs <- res.Err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// oneChannel returns f's only channel.
func oneChannel(t *testing.T, f *fixture) *Channel {
	t.Helper()
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for c := range f.srv.chans {
		return c
	}
	t.Fatal("no channel")
	return nil
}

// tester34, 10: an unknown codec id was named twice in the reason
// ("request 1: unknown codec id 7: unknown codec id 7"). A request header
// claiming 4 GiB closed the connection (over max(4 × payload, 64 MiB));
// since tester101 its body is skipped, held in no buffer, and the
// connection stays open while the bytes come: a consumer that stops
// sending them closes it as a truncated body that names what was skipped.
func TestAbuse1_CloseReasonsSayWhatHappened(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	c.Write(append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 7, ID: 1, Length: 1}.Append(nil), 0))
	expectClosed(t, c)
	var line string
	if !waitFor(2*time.Second, func() bool { line = f.logs.find("channel closed reason=request 1:"); return line != "" }) {
		t.Fatalf("no close line; logs: %q", f.logs.lines())
	}
	if n := strings.Count(line, "unknown codec id 7"); n != 1 {
		t.Errorf("%q names the codec id %d times, want once", line, n)
	}

	c = rawConn(t, f)
	c.Write(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 1, Length: 1<<32 - 1}.Append(nil))
	c.Write(make([]byte, 1<<20))
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a request header claiming 4 GiB: read %d bytes, %v; want the connection open, nothing answered before the body is read", n, err)
	}
	c.(*net.TCPConn).CloseWrite()
	expectClosed(t, c)
	want := "protocol: truncated frame: skipping a body of 4294967295 bytes over the payload limit: EOF"
	if !waitFor(2*time.Second, func() bool { line = f.logs.find("body of 4294967295"); return line != "" }) {
		t.Fatalf("no close line; logs: %q", f.logs.lines())
	}
	if !strings.Contains(line, want) {
		t.Errorf("close line %q\nwant the reason %q", line, want)
	}
}

// readyAnswer is a handler that answers every request with b after 10 ms.
type readyAnswer []byte

func (b readyAnswer) Serve(context.Context, *Request) spi.Result {
	time.Sleep(10 * time.Millisecond)
	return spi.Result{Value: []byte(b)}
}

package kernel

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// abdAnswer is one answer a raw consumer read: its status and, for a
// failure, its message.
type abdAnswer struct {
	status spi.Status
	msg    string
}

// abdReadFrames reads frames from a raw consumer's connection c, calling
// fn with each frame's header and body, until a read fails.
func abdReadFrames(c net.Conn, fn func(h protocol.Header, body []byte)) {
	br := bufio.NewReader(c)
	var hb [protocol.HeaderLen]byte
	for {
		h, err := protocol.ReadHeader(br, &hb, 0)
		if err != nil {
			return
		}
		b := make([]byte, h.Length)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		fn(h, b)
	}
}

// abdAnswerOf is the answer of response frame h with body b.
func abdAnswerOf(h protocol.Header, b []byte) abdAnswer {
	a := abdAnswer{status: h.Status}
	if h.Status != spi.StatusOK {
		if _, rest, err := protocol.ParseAttachments(b); err == nil {
			m, _, _ := protocol.ParseString(rest)
			a.msg = string(m)
		}
	}
	return a
}

// A consumer that keeps calling through the drain (a raw one: it ignores
// the read-only event, as a consumer not airnode's may) leaves the
// kernel's own drain little to wait for (the calls in flight when it
// began end in a second), and the go-away then goes out at once (nu43
// finding 1): the steady calls read after it are answered not run. One
// call read during the drain, before the go-away, runs past the shutdown
// timeout: the exchange's Shutdown, waiting for it, reaches the timeout,
// and the call it then abandons is reported as the kernel's drain
// reports its own: an AbandonedError counting and naming it, the consumer
// answered SERVER_ERROR "shut down: its shutdown timeout passed", and no
// bare "context deadline exceeded".
//
// The long call must be read inside the drain: it is flagged 100 ms into
// it and the drain lasts the steady calls' second (it was 300 ms, which a
// loaded machine's 20 ms ticker could miss, the long call then answered
// not run after the go-away); the shutdown timeout, 3 s, comes after
// the steady calls read during the drain end.
func TestABDExchangeDrainPastTimeoutReportsAbandonedCalls(t *testing.T) {
	const timeout = 3 * time.Second
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownTimeout(timeout), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	c := dialRawClient(t, e.URL().Address(), "tcp").(net.Conn) // closed at the test's end
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))

	var mu sync.Mutex
	answers := map[uint64]abdAnswer{}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		abdReadFrames(c, func(h protocol.Header, b []byte) {
			if h.IsEvent() || h.IsRequest() {
				return // the ping's answer, read-only, go-away, the provider's pings
			}
			mu.Lock()
			answers[h.ID] = abdAnswerOf(h, b)
			mu.Unlock()
		})
	}()
	var wmu sync.Mutex
	write := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := c.Write(b)
		return err
	}
	if err := write(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil)); err != nil {
		t.Fatal(err)
	}
	// Sleep(1000) every 20 ms, json codec (2), until the provider closes;
	// once long is set, one Sleep(8000).
	var long atomic.Bool
	stop := make(chan struct{})
	sent := make(chan uint64, 1)
	go func() {
		id := uint64(1)
		defer func() { sent <- id }()
		for {
			select {
			case <-stop:
				return
			case <-readerDone:
				return
			case <-time.After(20 * time.Millisecond):
			}
			id++
			arg := "1000\n"
			if long.Swap(false) {
				arg = "8000\n"
			}
			body := append(protocol.AppendRequestPreamble(nil, "demo.Echo", "Sleep", 10_000, nil, 1), arg...)
			req := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 2, ID: id, Length: uint32(len(body))}.Append(nil)
			if write(append(req, body...)) != nil {
				return
			}
		}
	}()
	eventually(t, "the first Sleep answered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return answers[2].status == spi.StatusOK
	})

	start := time.Now()
	// read during the kernel's drain (the calls in flight as it began end
	// at about 1 s), before the go-away
	longAt := time.AfterFunc(100*time.Millisecond, func() { long.Store(true) })
	defer longAt.Stop()
	err = p.Shutdown(ctxT(t))
	took := time.Since(start)
	close(stop)
	var ab *AbandonedError
	if !errors.As(err, &ab) || ab.Calls != 1 || len(ab.Which) != 1 {
		t.Fatalf("Shutdown after %v = %v; want an AbandonedError counting and naming the one call the exchange's drain abandoned", took, err)
	}
	if strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("Shutdown = %v; want no bare context deadline exceeded", err)
	}
	for _, w := range ab.Which {
		if !strings.HasPrefix(w.Call, "demo.Echo.Sleep from 127.0.0.1:") || w.Count != 1 {
			t.Errorf("abandoned calls named %v; want one demo.Echo.Sleep from the consumer's address", w)
		}
	}
	if len(ab.Which) > ab.Calls {
		t.Errorf("%d calls named, %d counted", len(ab.Which), ab.Calls)
	}
	if took < timeout-100*time.Millisecond || took > timeout+4*time.Second {
		t.Errorf("Shutdown took %v; want about its %v timeout", took, timeout)
	}
	<-readerDone
	last := <-sent
	mu.Lock()
	defer mu.Unlock()
	abandoned, notRun := 0, 0
	for id, a := range answers {
		switch {
		case a.status == spi.StatusOK:
		case strings.Contains(a.msg, "did not run the request (after its go-away)"):
			notRun++
		case a.status == spi.StatusServerError:
			if !strings.Contains(a.msg, "shut down: its shutdown timeout passed while demo.Echo.Sleep was running; the call was abandoned") {
				t.Errorf("call %d answered SERVER_ERROR %q; want the kernel's abandoned message", id, a.msg)
			}
			abandoned++
		}
	}
	if abandoned != 1 || len(ab.Which) != 1 {
		t.Errorf("consumer answered SERVER_ERROR abandoned %d times, Shutdown named %d calls (%v); want the one Sleep(8000)", abandoned, len(ab.Which), ab.Which)
	}
	if notRun < 1 {
		t.Errorf("no request answered as not run after the go-away; want the steady ones sent after it")
	}
	t.Logf("Shutdown took %v: %v; %d requests sent, %d answered, %d SERVER_ERROR abandoned, %d not run", took.Round(time.Millisecond), err, last-1, len(answers), abandoned, notRun)
}

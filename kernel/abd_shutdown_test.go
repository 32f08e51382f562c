package kernel

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
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

// A consumer that keeps calling through the drain (a raw one: it ignores
// the read-only event, as a consumer not airnode's may) leaves the
// kernel's own drain nothing to wait for (the calls in flight when it
// began end in 100 ms), but the exchange's Shutdown, waiting for a moment
// with no request in flight, reaches the shutdown timeout. The calls it
// then abandons are reported as the kernel's drain reports its own: an
// AbandonedError counting and naming them, the consumer answered
// SERVER_ERROR "shut down: its shutdown timeout passed", and no bare
// "context deadline exceeded".
func TestABDExchangeDrainPastTimeoutReportsAbandonedCalls(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownTimeout(800*time.Millisecond), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", e.URL().Address(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))

	var mu sync.Mutex
	answers := map[uint64]abdAnswer{}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
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
			if h.IsEvent() || h.IsRequest() {
				continue // the ping's answer, read-only, go-away, the provider's pings
			}
			a := abdAnswer{status: h.Status}
			if h.Status != spi.StatusOK {
				if _, rest, err := protocol.ParseAttachments(b); err == nil {
					m, _, _ := protocol.ParseString(rest)
					a.msg = string(m)
				}
			}
			mu.Lock()
			answers[h.ID] = a
			mu.Unlock()
		}
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
	// Sleep(100) every 20 ms, json codec (2), until the provider closes.
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
			body := append(protocol.AppendRequestPreamble(nil, "demo.Echo", "Sleep", 10_000, nil, 1), "100\n"...)
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
	err = p.Shutdown(ctxT(t))
	took := time.Since(start)
	close(stop)
	var ab *AbandonedError
	if !errors.As(err, &ab) || ab.Calls < 1 || len(ab.Which) < 1 {
		t.Fatalf("Shutdown after %v = %v; want an AbandonedError counting and naming the calls the exchange's drain abandoned", took, err)
	}
	if strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("Shutdown = %v; want no bare context deadline exceeded", err)
	}
	for _, w := range ab.Which {
		if !strings.HasPrefix(w, "demo.Echo.Sleep from 127.0.0.1:") {
			t.Errorf("abandoned call named %q; want demo.Echo.Sleep from the consumer's address", w)
		}
	}
	if len(ab.Which) > ab.Calls {
		t.Errorf("%d calls named, %d counted", len(ab.Which), ab.Calls)
	}
	if took < 700*time.Millisecond || took > 5*time.Second {
		t.Errorf("Shutdown took %v; want about its 800ms timeout", took)
	}
	<-readerDone
	last := <-sent
	mu.Lock()
	defer mu.Unlock()
	abandoned := 0
	for id, a := range answers {
		switch {
		case a.status == spi.StatusOK:
		case a.status == spi.StatusServerError:
			if !strings.Contains(a.msg, "shut down: its shutdown timeout passed while demo.Echo.Sleep was running; the call was abandoned") {
				t.Errorf("call %d answered SERVER_ERROR %q; want the kernel's abandoned message", id, a.msg)
			}
			abandoned++
		}
	}
	if abandoned < 1 || len(ab.Which) != min(abandoned, maxAbandonedNamed) {
		t.Errorf("consumer answered SERVER_ERROR abandoned %d times, Shutdown named %d calls (%v)", abandoned, len(ab.Which), ab.Which)
	}
	t.Logf("Shutdown took %v: %v; %d requests sent, %d answered, %d SERVER_ERROR abandoned", took.Round(time.Millisecond), err, last-1, len(answers), abandoned)
}

package exchange

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// A request that crosses the provider's go-away on the wire is answered
// as not run before the connection closes. Consumers number a call when
// it starts, and concurrent calls are written in any order: request 9 may
// be written after 10, which the go-away then names as the last read, so
// the consumer's call 9 keeps waiting as read. The provider used to close
// right after sending the go-away; 9, arriving a moment later, was never
// read, and the consumer failed the call with "the provider may have run
// it" (CHANNEL_INACTIVE with spi.ErrRequestSent, which failover does not
// retry for a method that is not idempotent): the CI failure of
// kernel's TestProviderClosingUnderLoadFailsNoCall under load. Shutdown
// now pings after the go-away and closes after the answer, which the
// consumer writes after request 9.
func TestT15Flake_RequestCrossingTheGoAwayIsAnswered(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.Write(echoFrame(t, 10, "numbered after 9, written first"))
	if h, _, err := readFrame(br); err != nil || h.ID != 10 || h.Status != spi.StatusOK {
		t.Fatalf("answer to request 10: %+v, %v", h, err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- f.srv.Shutdown(ctx)
	}()
	for {
		h, body, err := readFrame(br)
		if err != nil {
			t.Fatalf("waiting for the go-away: %v", err)
		}
		if h.IsEvent() && !h.TwoWay() && len(body) == goAwayLen && body[0] == goAwayEvent {
			if last := binary.BigEndian.Uint64(body[1:]); last != 10 {
				t.Fatalf("go-away says last read %d, want 10", last)
			}
			break
		}
	}
	// A consumer busy for a moment: its request 9 was on its way.
	time.Sleep(100 * time.Millisecond)
	c.Write(echoFrame(t, 9, "crossing the go-away"))
	var answer *protocol.Header
	var msg string
	for {
		h, body, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Logf("read: %v", err)
			}
			break
		}
		switch {
		case h.IsEvent() && h.IsRequest() && h.TwoWay():
			var pong [protocol.HeaderLen]byte
			protocol.Header{Flags: protocol.FlagEvent, Status: spi.StatusOK, ID: h.ID}.Put(pong[:])
			c.Write(pong[:])
		case !h.IsRequest() && h.ID == 9:
			answer, msg = &h, string(body)
		}
	}
	if answer == nil {
		t.Fatal("request 9, written after the go-away crossed it, got no answer before the provider closed: the consumer takes it for read (9 < 10) and fails it as may-have-run")
	}
	if answer.Status != spi.StatusServiceNotFound || !strings.Contains(msg, "did not run") {
		t.Errorf("request 9: %s %q; want SERVICE_NOT_FOUND, not run", answer.Status, msg)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-f.errc
	f.errc <- nil
}

// A consumer that does not answer the ping after the go-away holds
// Shutdown for at most goAwayAckWait.
func TestT15Flake_SilentConsumerDelaysShutdownBoundedly(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	c.Write(echoFrame(t, 1, "x"))
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if h, _, err := readFrame(br); err != nil || h.ID != 1 {
		t.Fatalf("answer to request 1: %+v, %v", h, err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > goAwayAckWait+5*time.Second {
		t.Errorf("Shutdown took %v with a consumer that never answers its ping; want about goAwayAckWait (%v)", took, goAwayAckWait)
	}
	<-f.errc
	f.errc <- nil
}

// A call made after the go-away is not sent, whatever its id: one
// numbered under the go-away's would be read after it, so not run, and
// sent it could arrive after the provider's last read.
func TestT15Flake_NoCallSentAfterTheGoAway(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	warmUp(t, ch)
	ch.takeGoAway(ch.nextID.Load() + 100) // the next call's id is under it
	read := f.provChans()[0].Stats().FramesRead
	e := wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "late"), 5*time.Second).Err, spi.StatusChannelInactive)
	if errors.Is(e, spi.ErrRequestSent) || !strings.Contains(e.Message, "did not run") {
		t.Errorf("call after the go-away: %v; want CHANNEL_INACTIVE, not run, not sent", e)
	}
	time.Sleep(50 * time.Millisecond)
	if n := f.provChans()[0].Stats().FramesRead; n != read {
		t.Errorf("the provider read %d more frames after the go-away; want none", n-read)
	}
}

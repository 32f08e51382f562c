package exchange

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// provChans returns the server's provider channels.
func (f *fixture) provChans() []*Channel {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	var out []*Channel
	for ch := range f.srv.chans {
		out = append(out, ch)
	}
	return out
}

// echoFrame is an encoded Echo(v) request frame with id.
func echoFrame(t *testing.T, id uint64, v any) []byte {
	t.Helper()
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, echoInv("Echo", v), 0); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: id, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	return fb.b
}

// Provider side of the go-away: it carries the highest request id read so
// far, and a request read after it is not run: it is answered
// SERVICE_NOT_FOUND at once, whatever its id (one written after a higher
// id would otherwise wait as may-have-run for the close), while one read
// before it was answered as usual. A raw consumer, which sends regardless.
func TestGoAwayProviderRunsNothingReadAfterIt(t *testing.T) {
	f := startServer(t, false, nil)
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	c.Write(echoFrame(t, 5, "before"))
	if h, _, err := readFrame(br); err != nil || h.ID != 5 || h.Status != spi.StatusOK {
		t.Fatalf("answer to request 5: %+v, %v", h, err)
	}
	pcs := f.provChans()
	if len(pcs) != 1 {
		t.Fatalf("%d provider channels, want 1", len(pcs))
	}
	pcs[0].sendGoAway()
	h, body, err := readFrame(br)
	if err != nil || !h.IsEvent() || h.TwoWay() || len(body) != goAwayLen || body[0] != goAwayEvent {
		t.Fatalf("go-away frame: %+v %q, %v", h, body, err)
	}
	if last := binary.BigEndian.Uint64(body[1:]); last != 5 {
		t.Fatalf("go-away says last read %d, want 5", last)
	}
	c.Write(echoFrame(t, 4, "late, lower id"))
	h, body, err = readFrame(br)
	if err != nil || h.ID != 4 || h.Status != spi.StatusServiceNotFound || !strings.Contains(string(body), "did not run") {
		t.Fatalf("request 4, read after the go-away: %+v %q, %v; want SERVICE_NOT_FOUND, not run", h, body, err)
	}
}

// Consumer side of the go-away: the channel turns read-only; a call
// pending with an id the provider did not read fails at once as not run
// (CHANNEL_INACTIVE without spi.ErrRequestSent: failover retries it), a
// new call is not sent at all, and a call the provider was running keeps
// ErrRequestSent when the channel closes under it. Both transports.
func TestGoAwayTellsWhichRequestsNeverRan(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			warmUp(t, ch)
			running := make(chan error, 1)
			go func() { running <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Block"), 10*time.Second).Err }()
			// Pending too: the provider may still count the warm-up's call
			// in flight after its answer, and the Block not numbered yet
			// would then get the id the go-away below says was never read
			// (a CI run at load 11: "did not run" for the running call).
			if !waitFor(5*time.Second, func() bool { return ch.Stats().Pending == 1 && f.srv.InFlight() == 1 }) {
				t.Fatal("the blocking request never started")
			}
			// Every id numbered from here on is the Sleep's or later: a
			// ping numbered after the Sleep made nextID pass it, and a
			// go-away at nextID then left the Sleep to succeed (the CI of
			// ae4dd66).
			unread := ch.nextID.Load() + 1
			pending := make(chan error, 1)
			go func() {
				// Long enough that it is still running when the go-away
				// below comes, however slowly this test's goroutine is
				// scheduled (3 s was not, once, at load 25: the call
				// succeeded first).
				pending <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 8000), 15*time.Second).Err
			}()
			if !waitFor(5*time.Second, func() bool { return ch.Stats().Pending == 2 && f.srv.InFlight() == 2 }) {
				t.Fatal("the second call never became pending")
			}
			// As if the provider had stopped reading before the Sleep
			// (which it is running, but the consumer cannot tell).
			ch.takeGoAway(unread)
			if !ch.ReadOnly() {
				t.Error("channel not read-only after the go-away")
			}
			start := time.Now()
			e := wantStatus(t, <-pending, spi.StatusChannelInactive)
			if errors.Is(e, spi.ErrRequestSent) || !strings.Contains(e.Message, "did not run the request") || time.Since(start) > time.Second {
				t.Errorf("pending call past the go-away: %v after %v; want at once, CHANNEL_INACTIVE without ErrRequestSent", e, time.Since(start))
			}
			read := f.provChans()[0].Stats().FramesRead
			e = wantStatus(t, ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "late"), 5*time.Second).Err, spi.StatusChannelInactive)
			if errors.Is(e, spi.ErrRequestSent) {
				t.Errorf("call after the go-away: %v; want it not sent", e)
			}
			time.Sleep(50 * time.Millisecond)
			if n := f.provChans()[0].Stats().FramesRead; n != read {
				t.Errorf("the provider read %d more frames after the go-away; want none (the call is not sent)", n-read)
			}
			f.provChans()[0].Close("test: provider gone")
			e = wantStatus(t, <-running, spi.StatusChannelInactive)
			if !errors.Is(e, spi.ErrRequestSent) {
				t.Errorf("call the provider was running: %v; want ErrRequestSent (it may have run)", e)
			}
		})
	}
}

// Server.Close sends the go-away before closing: a consumer learns of it
// (ReadOnly) before the channel dies.
func TestServerCloseSendsGoAway(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	warmUp(t, ch)
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("consumer channel still up after Server.Close")
	}
	if ch.goAway.Load() < 2 { // ids start at 1: the warm-up call was read
		t.Errorf("go-away = %d, want at least 2 (past the warm-up call, which the provider read)", ch.goAway.Load())
	}
}

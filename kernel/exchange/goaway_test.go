package exchange

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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

// The go-away: a request the provider read after it sent the event is not
// run, and when the channel closes the consumer's call fails with
// CHANNEL_INACTIVE without spi.ErrRequestSent (safe to retry anywhere),
// while a call the provider was running when it closed keeps
// ErrRequestSent (it may have run). Both transports.
func TestGoAwayTellsWhichRequestsNeverRan(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "tcp", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			f.svc.canceled = make(chan time.Time, 4)
			ch := f.dial(nil)
			warmUp(t, ch)

			running := make(chan error, 1)
			go func() { running <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Block"), 10*time.Second).Err }()
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 }) {
				t.Fatal("the blocking request never started")
			}
			pcs := f.provChans()
			if len(pcs) != 1 {
				t.Fatalf("%d provider channels, want 1", len(pcs))
			}
			pc := pcs[0]
			pc.sendGoAway()
			if !waitFor(5*time.Second, func() bool { return ch.ReadOnly() }) {
				t.Fatal("the consumer never took the go-away (ReadOnly stays false)")
			}

			late := make(chan error, 1)
			go func() {
				late <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "late"), 10*time.Second).Err
			}()
			if !waitFor(5*time.Second, func() bool { return pc.Stats().FramesRead >= 3 }) { // warm-up, Block, late
				t.Fatal("the provider never read the late request")
			}
			time.Sleep(50 * time.Millisecond) // had it run, its answer would be back by now
			select {
			case err := <-late:
				t.Fatalf("the request read after the go-away was answered (%v): it must not run", err)
			default:
			}
			pc.Close("test: provider gone")

			e := wantStatus(t, <-late, spi.StatusChannelInactive)
			if errors.Is(e, spi.ErrRequestSent) || !strings.Contains(e.Message, "before reading the request") {
				t.Errorf("call the provider never read: %v; want CHANNEL_INACTIVE without ErrRequestSent", e)
			}
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

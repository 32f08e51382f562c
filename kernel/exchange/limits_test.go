package exchange

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// serverChannels returns the server's live provider channels.
func serverChannels(s *Server) []*Channel { return s.live() }

// Issue 8 item 4: with a connection limit of 2, five concurrent slow calls on
// one consumer connection → exactly two run, three are answered
// SERVER_THREADPOOL_EXHAUSTED at once; heartbeats are still answered and
// another consumer connection is unaffected.
func TestConnectionLimit_RejectsBeyondCap(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, func(o *Options) { o.MaxConcurrent = 2 })
			a, b := f.dial(nil), f.dial(nil)
			const sleepMs = 1500
			type out struct {
				err     error
				elapsed time.Duration
			}
			outs := make(chan out, 5)
			start := time.Now()
			for range 5 {
				go func() {
					err := a.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", sleepMs), 10*time.Second).Err
					outs <- out{err, time.Since(start)}
				}()
			}
			// While a's two slots are taken: a heartbeat on a and two slow calls on b succeed.
			if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 2 }) {
				t.Fatalf("in flight = %d, want 2", f.srv.InFlight())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.Ping(ctx); err != nil {
				t.Fatalf("ping at the cap: %v", err)
			}
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					if err := b.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 100), 10*time.Second).Err; err != nil {
						t.Errorf("other connection: %v", err)
					}
				})
			}
			wg.Wait()
			ok, rejected := 0, 0
			for range 5 {
				o := <-outs
				switch o.err {
				case nil:
					ok++
				default:
					e := wantStatus(t, o.err, spi.StatusServerThreadpoolExhausted)
					if !strings.Contains(e.Message, "connection limit 2 concurrent requests reached") {
						t.Errorf("message %q does not name the limit", e.Message)
					}
					if o.elapsed >= sleepMs*time.Millisecond {
						t.Errorf("rejection took %v: it waited for a running call", o.elapsed)
					}
					rejected++
				}
			}
			if ok != 2 || rejected != 3 {
				t.Fatalf("ok=%d rejected=%d, want 2 and 3", ok, rejected)
			}
			var total int64
			for _, ch := range serverChannels(f.srv) {
				total += ch.Stats().Rejected
			}
			if total != 3 {
				t.Errorf("Stats().Rejected summed = %d, want 3", total)
			}
		})
	}
}

// capOneConsumer starts a smux provider with MaxConcurrent 1 and returns
// it with a consumer session and channel that made one call.
func capOneConsumer(t *testing.T) (*fixture, spi.Session, *Channel) {
	t.Helper()
	f := startServer(t, true, func(o *Options) { o.MaxConcurrent = 1 })
	sess := dialSession(t, f.addr(), true)
	ch := NewChannel(sess, Options{Side: spi.Consumer, Codec: codecByID})
	t.Cleanup(func() { ch.Close("test done"); ch.Wait() })
	if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "hi"), 5*time.Second); r.Err != nil {
		t.Fatal(r.Err)
	}
	return f, sess, ch
}

// A consumer that opens streams without end gets at most
// max(MaxConcurrent, MinStreamCap) of them; the rest are refused and the
// connection keeps working.
func TestConnectionLimit_CapsSmuxStreams(t *testing.T) {
	f, sess, ch := capOneConsumer(t)
	const extra = MinStreamCap + 10
	var streams []io.Closer
	for range extra {
		s, err := sess.(*smuxSession).s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	chans := serverChannels(f.srv)
	if len(chans) != 1 {
		t.Fatalf("%d server channels, want 1", len(chans))
	}
	pc := chans[0]
	if !waitFor(5*time.Second, func() bool { return pc.Stats().RefusedStreams == 10 }) {
		t.Fatalf("stats %+v: want 10 refused streams", pc.Stats())
	}
	if n := pc.Stats().OpenStreams; n != MinStreamCap {
		t.Errorf("open streams = %d, want %d", n, MinStreamCap)
	}
	if !strings.Contains(f.logs.find("too many streams"), "max_streams=64") {
		t.Errorf("refusal not logged with its cap: %q", f.logs.find("too many streams"))
	}
	for _, s := range streams {
		s.Close()
	}
	if !waitFor(5*time.Second, func() bool { return pc.Stats().OpenStreams == 0 }) {
		t.Fatalf("open streams = %d after the consumer closed them", pc.Stats().OpenStreams)
	}
	// Still alive, and a large request (own stream) is admitted again.
	big := strings.Repeat("x", 100<<10)
	if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", big), 5*time.Second); r.Err != nil || r.Value != big {
		t.Fatalf("large echo after refusals: %v", r.Err)
	}
}

// A large request whose stream is refused (the consumer already has the
// cap's streams open) is answered SERVER_THREADPOOL_EXHAUSTED at once,
// not left to its timeout (tester58: about 120 calls of `bench -c 200
// --req 100KiB` against connection.concurrency=1 waited their 10 s).
func TestConnectionLimit_RefusedStreamIsAnswered(t *testing.T) {
	f, sess, ch := capOneConsumer(t)
	var streams []io.Closer
	for range MinStreamCap { // the cap's worth, held open unwritten
		s, err := sess.(*smuxSession).s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	pc := serverChannels(f.srv)[0]
	if !waitFor(5*time.Second, func() bool { return pc.Stats().OpenStreams == MinStreamCap }) {
		t.Fatalf("stats %+v: want %d open streams", pc.Stats(), MinStreamCap)
	}
	big := strings.Repeat("x", 100<<10)
	start := time.Now()
	r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", big), 10*time.Second)
	took := time.Since(start)
	e := wantStatus(t, r.Err, spi.StatusServerThreadpoolExhausted)
	if !strings.Contains(e.Message, "refused unread; not run") || !strings.Contains(e.Message, "more than 64 streams") {
		t.Errorf("message %q does not say the stream was refused over the cap", e.Message)
	}
	if took > 3*time.Second {
		t.Errorf("the refused call was answered after %v; want at once", took)
	}
	for _, s := range streams {
		s.Close()
	}
	if !waitFor(5*time.Second, func() bool { return pc.Stats().OpenStreams == 0 }) {
		t.Fatalf("open streams = %d after the consumer closed them", pc.Stats().OpenStreams)
	}
	if r := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", big), 5*time.Second); r.Err != nil || r.Value != big {
		t.Fatalf("large echo after the refusal: %v", r.Err)
	}
}

package exchange

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// slowWrites is a connection whose writes go out at rate bytes per second,
// slowPiece bytes at a time: a consumer whose own writer is slow (a
// CPU-starved process, -race) while the peer takes every byte at once,
// so that nothing waits unacknowledged in the socket. The pace counts
// from since across Writes (a timer's overshoot does not add up), and
// starts again after an idle gap.
type slowWrites struct {
	net.Conn
	rate int // bytes per second

	mu    sync.Mutex
	since time.Time
	sent  int
}

const slowPiece = 16 << 10

func (c *slowWrites) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.due()) > 20*time.Millisecond {
		c.since, c.sent = now, 0
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), slowPiece)
		m, err := c.Conn.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
		c.sent += k
		time.Sleep(time.Until(c.due()))
	}
	return n, nil
}

// due is when the bytes counted since since have gone out at rate.
func (c *slowWrites) due() time.Time {
	return c.since.Add(time.Duration(float64(c.sent) / float64(c.rate) * float64(time.Second)))
}

// TestDN_OwnLargeWriteIsNoSilence (fix-dn): a consumer writing a 24 MiB
// request that takes its own writer 16 s (1.5 MiB/s) to a provider that
// reads every byte at once keeps its connection, with the liveness check
// on and the request's 28 s timeout (QuietBound 14 s at most): the
// silence of the peer (no answer can come before the request is read) is
// explained by this side's sending, which stamps its progress per chunk
// of a large write. On tcp the quiet watch's ping waited in the writer
// behind the request; with nothing read and nothing unacknowledged in
// the socket (these test sessions have no spi.AckCounter, and on
// loopback the peer's kernel takes what is written at once), the check
// closed the healthy connection (40 MiB at 4 MiB/s: 7.9 s in, the call
// failed CHANNEL_INACTIVE; fix-dl saw it under -race with a 70 MiB
// request). On smux the body goes on a stream of its own and smux sends
// the streams' frames in turn: the primary stream's ping does not wait
// behind it, only behind the frame being written.
func TestDN_OwnLargeWriteIsNoSilence(t *testing.T) {
	t.Parallel()
	const (
		size    = 24 << 20
		rate    = 3 << 19 // 1.5 MiB/s: 16 s for the request
		timeout = 28 * time.Second
	)
	if QuietBound(timeout)+time.Second >= size/rate*time.Second {
		t.Fatalf("the write (%v) must outlast the quiet bound and the ping's wait (%v)", size/rate*time.Second, QuietBound(timeout)+time.Second)
	}
	for _, mux := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "smux"}[mux]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := startServer(t, mux, func(o *Options) {
				o.Payload = 64 << 20
				echo := o.Handler
				o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
					if req.Method != "Len" {
						return echo.Serve(ctx, req)
					}
					var b []byte
					if err := req.Args.Decode(&b); err != nil {
						return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument: %v", err)}
					}
					return spi.Result{Value: len(b)}
				})
			})
			conn, err := net.Dial("tcp", f.addr())
			if err != nil {
				t.Fatal(err)
			}
			slow := &slowWrites{Conn: conn, rate: rate}
			var sess spi.Session = newConnSession(slow, false)
			if mux {
				if sess, err = newSmuxSession(slow, false); err != nil {
					t.Fatal(err)
				}
			}
			closed := make(chan string, 1)
			ch := NewChannel(sess, Options{Side: spi.Consumer, Codec: codecByID, Heartbeat: checkHB{}, Payload: 64 << 20,
				Logger: slog.New(&logSink{}), OnClose: func(_ *Channel, r string) { closed <- r }})
			t.Cleanup(func() { ch.Close("test done"); ch.Wait() })
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "hi"), 5*time.Second); res.Err != nil {
				t.Fatal(res.Err)
			}

			pings := counters.Heartbeat.PingsSent.Load()
			start := time.Now()
			res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Len", make([]byte, size)), timeout)
			took := time.Since(start)
			select {
			case r := <-closed:
				t.Fatalf("the channel closed while this side wrote its 24 MiB request (%v in): %s", took.Round(time.Millisecond), r)
			default:
			}
			if res.Err != nil || toInt(res.Value) != size {
				t.Fatalf("24 MiB request after %v: %v (value %v), want its length", took.Round(time.Millisecond), res.Err, res.Value)
			}
			if took < QuietBound(timeout)+time.Second {
				t.Fatalf("the request took %v, less than the quiet bound and the ping's wait: the test proves nothing", took)
			}
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "after"), 5*time.Second); res.Err != nil {
				t.Fatalf("call after the request: %v", res.Err)
			}
			t.Logf("24 MiB at 1.5 MiB/s in %v, channel kept (pings sent meanwhile, any test: %d)", took.Round(time.Millisecond), counters.Heartbeat.PingsSent.Load()-pings)
		})
	}
}

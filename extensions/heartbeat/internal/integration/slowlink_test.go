package integration

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// tester24 finding 1: on a 10 Mbit/s link, 4 MiB responses (10 s
// timeout) sharing a connection with small calls (1 s timeout) never
// arrived: the small calls timed out behind the large frame, the
// liveness check's ping waited behind it too, and "nothing read" was
// judged per whole frame, so the check closed the busy connection every
// 2-5 s. These tests put a rate-limited testproxy between a consumer and
// a provider on the real transports, unwrapped (their spi.AckCounter is
// seen), with heartbeat.ping.on.timeout on (the default).

// slowRate is the test link's bandwidth, bytes per second: a 3 MB frame
// takes about 3 s on it.
const slowRate = 1_000_000

// largeSize is the large string a call carries: 3 s and more on the link.
const largeSize = 3_000_000

// payload serves demo.Echo: Echo(string) string, and Payload(n) returning
// a string of n bytes.
var payload = exchange.HandlerFunc(func(ctx context.Context, req *exchange.Request) spi.Result {
	if req.Method == "Payload" {
		var n int
		if err := req.Args.Decode(&n); err != nil {
			return spi.Result{Err: err}
		}
		return spi.Result{Value: strings.Repeat("x", n)}
	}
	return echo(ctx, req)
})

func transportNamed(t testing.TB, name string) spi.Transport {
	t.Helper()
	var b spi.TransportBuilder = smux.Builder{}
	if name == tcp.Name {
		b = tcp.Builder{}
	}
	tr, err := b.Build(spi.MustParse("airnode://127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// slowPair starts a provider on transport tname and a consumer channel to
// it through a testproxy, both with the heartbeat query q, and returns the
// consumer and the proxy (unlimited until SetRate). Each tweak edits both
// sides' exchange options.
func slowPair(t *testing.T, tname, q string, tweak ...func(*exchange.Options)) (*consumer, *provider, *testproxy.Proxy) {
	t.Helper()
	tr := transportNamed(t, tname)
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{addr: l.Addr().String(), closed: make(chan string, 16)}
	po := exchange.Options{
		Codec: codecByID, Handler: payload, Heartbeat: heartbeat(t, q), Logger: quiet,
		OnClose: func(_ *exchange.Channel, reason string) {
			select {
			case p.closed <- reason:
			default:
			}
		},
	}
	for _, f := range tweak {
		f(&po)
	}
	p.srv = exchange.NewServer(l, po)
	served := make(chan error, 1)
	go func() { served <- p.srv.Serve() }()
	t.Cleanup(func() {
		p.srv.Close()
		<-served
	})
	px := testproxy.New(t, p.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sess, err := transportNamed(t, tname).Dial(ctx, px.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sess.(spi.AckCounter); !ok {
		t.Fatalf("%s session is no spi.AckCounter", tname)
	}
	c := &consumer{closed: make(chan string, 1)}
	co := exchange.Options{
		Side: spi.Consumer, Codec: codecByID, Heartbeat: heartbeat(t, q), Logger: quiet,
		OnClose: func(_ *exchange.Channel, reason string) { c.closed <- reason },
	}
	for _, f := range tweak {
		f(&co)
	}
	c.ch = exchange.NewChannel(sess, co)
	t.Cleanup(func() {
		c.ch.Close("test over")
		c.ch.Wait()
	})
	if err := callFor(c.ch, 5*time.Second); err != nil {
		t.Fatalf("first call: %v", err)
	}
	return c, p, px
}

// bothOpen fails t when the consumer's channel or the provider's end of
// it has closed.
func bothOpen(t *testing.T, c *consumer, p *provider) {
	t.Helper()
	if r := c.ch.Reason(); r != "" {
		t.Fatalf("consumer's connection closed: %s", r)
	}
	select {
	case r := <-p.closed:
		t.Fatalf("provider closed its connection: %s", r)
	default:
	}
}

// smallCalls calls Echo with timeout on c from n goroutines until stop
// is closed, counting SERVER_TIMEOUTs; wait waits for them.
func smallCalls(c *consumer, n int, timeout time.Duration, stop <-chan struct{}) (timeouts *atomic.Int64, wait func()) {
	timeouts = new(atomic.Int64)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if spi.StatusOf(callFor(c.ch, timeout)) == spi.StatusServerTimeout {
					timeouts.Add(1)
				}
			}
		})
	}
	return timeouts, wg.Wait
}

// TestT24_LargeFrameOnSlowLinkKeepsConnection: a 3 MB response (down) or
// request (up) crossing a 1 MB/s link while small calls with a 300 ms
// timeout time out behind it: the liveness check pings and finds bytes
// of the response arriving (read progress) or the peer acknowledging the
// request being written (write progress), so the connection stays and
// the large call completes, on tcp and smux. Before, the check closed it
// within about 1.3 s and the large call failed CHANNEL_INACTIVE.
func TestT24_LargeFrameOnSlowLinkKeepsConnection(t *testing.T) {
	t.Parallel()
	for _, tname := range []string{tcp.Name, smux.Name} {
		for _, dir := range []string{"response", "request"} {
			t.Run(tname+"/"+dir, func(t *testing.T) {
				t.Parallel()
				c, _, px := slowPair(t, tname, "heartbeat=idle")
				inv := &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{largeSize}}
				if dir == "request" {
					px.SetRate(slowRate, 0)
					inv = &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{strings.Repeat("y", largeSize)}}
				} else {
					px.SetRate(0, slowRate)
				}
				stop := make(chan struct{})
				timeouts, wait := smallCalls(c, 2, 300*time.Millisecond, stop)
				start := time.Now()
				res := c.ch.Invoke(context.Background(), jsonCodec{}, inv, 30*time.Second)
				took := time.Since(start)
				close(stop)
				wait()
				if res.Err != nil {
					t.Fatalf("large %s after %v: %v (%d small calls timed out)", dir, took.Round(time.Millisecond), res.Err, timeouts.Load())
				}
				if s, _ := res.Value.(string); dir == "response" && len(s) != largeSize {
					t.Fatalf("large response of %d bytes, want %d", len(s), largeSize)
				}
				if r := c.ch.Reason(); r != "" {
					t.Fatalf("connection closed: %s", r)
				}
				if took < 2*time.Second {
					t.Errorf("large %s took %v: the link was not slow", dir, took)
				}
				if timeouts.Load() == 0 {
					t.Errorf("no small call timed out: the liveness check never ran")
				}
				t.Logf("large %s in %v; %d small calls timed out SERVER_TIMEOUT behind it; connection kept", dir, took.Round(time.Millisecond), timeouts.Load())
			})
		}
	}
}

// TestT24_DualSlowFrameNotCut: heartbeat=dual with interval 1s (timeout
// 3s) on a connection carrying one 3 MB response that takes over 3 s:
// its bytes arriving count as reads, so neither side's reconnect timer
// (3 s with nothing read) cuts it.
func TestT24_DualSlowFrameNotCut(t *testing.T) {
	t.Parallel()
	for _, tname := range []string{tcp.Name, smux.Name} {
		t.Run(tname, func(t *testing.T) {
			t.Parallel()
			c, p, px := slowPair(t, tname, "heartbeat=dual&heartbeat.interval=1s")
			px.SetRate(0, slowRate*3/4) // 4 s
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{largeSize}}
			start := time.Now()
			res := c.ch.Invoke(context.Background(), jsonCodec{}, inv, 30*time.Second)
			took := time.Since(start)
			if res.Err != nil {
				t.Fatalf("large response after %v: %v", took.Round(time.Millisecond), res.Err)
			}
			bothOpen(t, c, p)
			if took < 3*time.Second {
				t.Errorf("the response took %v, want over the 3 s dual timeout", took)
			}
			t.Logf("3 MB response in %v under heartbeat=dual interval 1s: not cut", took.Round(time.Millisecond))
		})
	}
}

// TestT24_BlackHoleDuringLargeWriteClosed: a path that black-holes while
// a 6 MB request is being written still gets the connection closed: the
// write stops once the socket buffers are full, nothing more is
// acknowledged, and the check's ping closes it. Bound: the README's
// (first SERVER_TIMEOUT + max(1s, timeout)) plus one more check's second.
func TestT24_BlackHoleDuringLargeWriteClosed(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	const bound = timeout + time.Second + 2*time.Second
	for _, tname := range []string{tcp.Name, smux.Name} {
		t.Run(tname, func(t *testing.T) {
			t.Parallel()
			c, _, px := slowPair(t, tname, "heartbeat=idle")
			px.BlackHole()
			large := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{strings.Repeat("z", 6_000_000)}}
			go c.ch.Invoke(context.Background(), jsonCodec{}, large, 60*time.Second)
			var first time.Time
			deadline := time.Now().Add(15 * time.Second)
			for c.ch.Reason() == "" && time.Now().Before(deadline) {
				if spi.StatusOf(callFor(c.ch, timeout)) == spi.StatusServerTimeout && first.IsZero() {
					first = time.Now()
				}
			}
			if first.IsZero() {
				t.Fatal("no call failed SERVER_TIMEOUT")
			}
			r, ok := waitReason(c.closed, time.Until(deadline))
			if !ok {
				t.Fatal("black-holed connection still open 15 s later")
			}
			took := time.Since(first)
			t.Logf("closed %v after the first SERVER_TIMEOUT: %s", took.Round(time.Millisecond), r)
			if took > bound {
				t.Errorf("closed %v after the first SERVER_TIMEOUT, want within %v", took, bound)
			}
			if !strings.Contains(r, "liveness check") {
				t.Errorf("reason %q does not name the check", r)
			}
		})
	}
}

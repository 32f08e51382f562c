package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// tester25 N2 and N6: heartbeat strategies counted only reads as signs of
// life, so a side writing a large frame over a slow link (reading nothing
// meanwhile, its pings and the peer's answers queued behind the frame)
// took the busy connection for a dead one: an idle provider writing a
// 6 MiB response closed it after its negotiated 5 s, and both consumer
// strategies cut a slow upload. The strategies now count the peer
// acknowledging more of a backlog written to it (spi.AckCounter) as a
// read; a black hole, which acknowledges nothing, is still closed in the
// strategies' bounds.

// hbSize is the large frame of these tests: over 6 s on the slowRate link.
const hbSize = 6 << 20

// hbPair is slowPair with both sides' heartbeat hellos set and exchanged
// by a first ping, as the kernel's handshake does, so the provider closes
// after the bound derived from the consumer's settings (idle, interval
// 1s, retries 3: 5 s) rather than its own heartbeat.timeout.
func hbPair(t *testing.T, tname, q string) (*consumer, *provider, *testproxy.Proxy) {
	t.Helper()
	hello := exchange.HeartbeatHello(spi.MustParse("airnode://127.0.0.1:1/x?" + q))
	c, p, px := slowPair(t, tname, q, func(o *exchange.Options) { o.Hello = hello })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.ch.Ping(ctx); err != nil {
		t.Fatalf("hello ping: %v", err)
	}
	if _, ok := c.ch.PeerHeartbeat(); !ok {
		t.Fatal("the provider's heartbeat settings did not arrive")
	}
	return c, p, px
}

// largeCall makes one hbSize call on c: a request of hbSize bytes (up)
// or a response of hbSize bytes (down), with a 60 s timeout.
func largeCall(c *consumer, dir string) spi.Result {
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{hbSize}}
	if dir == "up" {
		inv = &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{strings.Repeat("u", hbSize)}}
	}
	return c.ch.Invoke(context.Background(), jsonCodec{}, inv, time.Minute)
}

// TestT26_LargeFrameOverSlowLinkKept: with heartbeat.interval=1s on both
// sides, a 6 MiB response (down; idle only: tester25 N2) or request (up;
// idle and dual: N6) crossing a 1 MB/s link completes and the connection
// stays, on tcp and smux. Before, the idle provider closed it 5 s into the
// response ("nothing read from or written to"), the idle consumer after 3
// pings queued behind the request, the dual consumer after 3 s with
// nothing read.
func TestT26_LargeFrameOverSlowLinkKept(t *testing.T) {
	t.Parallel()
	cases := []struct{ strategy, dir string }{{"idle", "down"}, {"idle", "up"}, {"dual", "up"}, {"dual", "down"}}
	for _, tname := range []string{tcp.Name, smux.Name} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s/%s", tname, tc.strategy, tc.dir), func(t *testing.T) {
				t.Parallel()
				c, p, px := hbPair(t, tname, "heartbeat="+tc.strategy+"&heartbeat.interval=1s")
				if tc.dir == "up" {
					px.SetRate(slowRate, 0)
				} else {
					px.SetRate(0, slowRate)
				}
				start := time.Now()
				res := largeCall(c, tc.dir)
				took := time.Since(start)
				if res.Err != nil {
					t.Fatalf("6 MiB %s after %v: %v", tc.dir, took.Round(time.Millisecond), res.Err)
				}
				if s, _ := res.Value.(string); len(s) != hbSize && tc.dir == "down" {
					t.Fatalf("response of %d bytes, want %d", len(s), hbSize)
				}
				bothOpen(t, c, p)
				if err := callFor(c.ch, 3*time.Second); err != nil {
					t.Fatalf("small call after the large one: %v", err)
				}
				if took < 5*time.Second {
					t.Errorf("6 MiB %s took %v: not over the 5 s bounds, the test shows nothing", tc.dir, took)
				}
				t.Logf("6 MiB %s in %v under heartbeat=%s interval 1s: connection kept", tc.dir, took.Round(time.Millisecond), tc.strategy)
			})
		}
	}
}

// TestT26_BlackHoleDuringLargeFrameClosed: the path black-holes 2 s into
// a 6 MiB request (up) or response (down) on a 1 MB/s link: nothing more
// is acknowledged, so each side still closes within its strategy's
// bound from the black hole — idle: the consumer after interval ×
// (retries + 1) + 1 s = 5 s, the provider after its negotiated 5 s + 1 s;
// dual: both after heartbeat.timeout (3 s) + its reconnect tick (1 s) +
// 0.5 s, as TestH4_DualBlackHoleDetectedOnBothSides allows. Each bound
// grows by timerSteps times the most the test's goroutines woke late
// meanwhile (lagMeter): under -race on two CPUs at load 12 to 22 the
// strategies' timers ran up to 2.6 s late ("nothing read for 7.6s"
// against a 5 s bound), on a quiet machine a few milliseconds; and by
// task.Grace, which a check that ran late waits once before its verdict
// (the lateness it measures is its own, not the test's: 123 ms against
// the test's 55 ms closed the idle consumer 13 ms past bound + 4 × 55 ms).
func TestT26_BlackHoleDuringLargeFrameClosed(t *testing.T) {
	t.Parallel()
	bounds := map[string][2]time.Duration{ // consumer, provider
		"idle": {5 * time.Second, 6 * time.Second},
		"dual": {4500 * time.Millisecond, 4500 * time.Millisecond},
	}
	// the timers between the black hole and the close, each of which may
	// wake late: the idle consumer's tick and three ping timeouts
	const timerSteps = 4
	for _, tname := range []string{tcp.Name, smux.Name} {
		for _, strategy := range []string{"idle", "dual"} {
			for _, dir := range []string{"up", "down"} {
				t.Run(tname+"/"+strategy+"/"+dir, func(t *testing.T) {
					t.Parallel()
					c, p, px := hbPair(t, tname, "heartbeat="+strategy+"&heartbeat.interval=1s")
					if dir == "up" {
						px.SetRate(slowRate, 0)
					} else {
						px.SetRate(0, slowRate)
					}
					done := make(chan spi.Result, 1)
					go func() { done <- largeCall(c, dir) }()
					time.Sleep(2 * time.Second)
					lag := startLagMeter(t)
					px.BlackHole()
					hole := time.Now()
					for i, side := range []string{"consumer", "provider"} {
						ch := c.closed
						if side == "provider" {
							ch = p.closed
						}
						bound := bounds[strategy][i]
						r, ok := waitReasonLagging(ch, bound+3*time.Second-time.Since(hole), lag, timerSteps)
						took := time.Since(hole)
						if !ok {
							t.Errorf("%s: black-holed connection still open %v later (goroutines woke up to %v late)",
								side, took.Round(time.Millisecond), lag.max().Round(time.Millisecond))
							continue
						}
						late := lag.max()
						t.Logf("%s closed %v after the black hole (goroutines woke up to %v late): %s",
							side, took.Round(time.Millisecond), late.Round(time.Millisecond), r)
						if want := bound + timerSteps*late + task.Grace; took > want {
							t.Errorf("%s closed %v after the black hole, want within %v (%v, %d timers up to %v late, and a late check's %v)",
								side, took.Round(time.Millisecond), want.Round(time.Millisecond), bound, timerSteps, late.Round(time.Millisecond), task.Grace)
						}
						if !strings.Contains(r, "heartbeat "+strategy) {
							t.Errorf("%s: reason %q is not the heartbeat's", side, r)
						}
					}
					if res := <-done; res.Err == nil {
						t.Error("the large call succeeded across a black hole")
					}
				})
			}
		}
	}
}

// TestT26_LargeFrameOverSlowLinkThroughNodes: the same 6 MiB response and
// request over a 1 MB/s link between two kernel.Nodes (Export, Refer over
// tcp, heartbeat interval 1s on both), so the kernel's wrappers (its
// guarded session under the exchange's channel) are in the path and must
// not hide spi.AckCounter from the strategies: the call completes and the
// consumer's connection is never redialled. Before, the idle provider
// closed the connection 5 s into the response (tester25 N2) and the idle
// consumer cut the upload after 3 pings (N6).
func TestT26_LargeFrameOverSlowLinkThroughNodes(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"idle", "dual"} {
		for _, dir := range []string{"down", "up"} {
			t.Run(strategy+"/"+dir, func(t *testing.T) {
				t.Parallel()
				hb := "heartbeat=" + strategy + "&heartbeat.interval=1s"
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				pn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
				t.Cleanup(func() { _ = pn.Close() })
				exp, err := pn.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=tcp&warmup=0&"+hb))
				if err != nil {
					t.Fatal(err)
				}
				px := testproxy.New(t, exp.URL().Address())
				cn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
				t.Cleanup(func() { _ = cn.Close() })
				ref, err := cn.Refer(ctx, spi.MustParse("airnode://"+px.Addr()+"/demo.Echo?transport=tcp&timeout=60s&"+hb), spi.URL{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ref.Invoke(ctx, "Info"); err != nil {
					t.Fatal(err)
				}
				if n := len(px.Accepts()); n != 1 {
					t.Fatalf("%d connections before the large call, want 1", n)
				}
				method, arg := "Payload", any(hbSize)
				if dir == "up" {
					px.SetRate(slowRate, 0)
					method, arg = "Echo", strings.Repeat("u", hbSize)
				} else {
					px.SetRate(0, slowRate)
				}
				start := time.Now()
				_, err = ref.Invoke(ctx, method, arg)
				took := time.Since(start)
				if err != nil {
					t.Fatalf("6 MiB %s through Nodes after %v: %v", dir, took.Round(time.Millisecond), err)
				}
				if _, err := ref.Invoke(ctx, "Info"); err != nil {
					t.Fatalf("small call after the large one: %v", err)
				}
				if n := len(px.Accepts()); n != 1 {
					t.Errorf("%d connections: the consumer redialled, its connection was cut", n)
				}
				if took < 5*time.Second {
					t.Errorf("6 MiB %s took %v: not over the 5 s bounds, the test shows nothing", dir, took)
				}
				t.Logf("6 MiB %s through Nodes in %v under heartbeat=%s interval 1s, one connection", dir, took.Round(time.Millisecond), strategy)
			})
		}
	}
}

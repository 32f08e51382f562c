package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// TestLivenessCheckKeptByAcksChecksAgain: a liveness check that the
// peer's acknowledgements kept (a large request still being taken in)
// goes on checking by itself. A call times out on a provider that holds
// it, the check's ping queues behind a 6 MB request crossing a 1 MB/s
// link, whose acknowledgements keep the channel; then the path
// black-holes. No other call times out SERVER_TIMEOUT (on tcp the calls
// behind the large request are never sent), yet the channel closes
// within a few checks. It stayed open (until the heartbeat, minutes
// later) when the check ended with its first ping: a CI run under load
// saw TestT24_BlackHoleDuringLargeWriteClosed/tcp open 15 s later.
func TestLivenessCheckKeptByAcksChecksAgain(t *testing.T) {
	t.Parallel()
	holding := func(o *exchange.Options) {
		o.Handler = exchange.HandlerFunc(func(ctx context.Context, req *exchange.Request) spi.Result {
			if req.Method == "Hold" {
				time.Sleep(5 * time.Second) // deaf to its deadline: no late answer arrives before the black hole
				return spi.Result{Value: "late"}
			}
			return payload(ctx, req)
		})
	}
	for _, tname := range []string{tcp.Name, smux.Name} {
		t.Run(tname, func(t *testing.T) {
			t.Parallel()
			c, _, px := slowPair(t, tname, "heartbeat=idle", holding)
			px.SetRate(slowRate, 0)
			start := time.Now()
			held := make(chan error, 1)
			go func() {
				inv := &spi.Invocation{Service: "demo.Echo", Method: "Hold"}
				held <- c.ch.Invoke(context.Background(), jsonCodec{}, inv, 500*time.Millisecond).Err
			}()
			time.Sleep(50 * time.Millisecond) // sent before the large request
			large := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{strings.Repeat("z", 6_000_000)}}
			go c.ch.Invoke(context.Background(), jsonCodec{}, large, time.Minute)
			if st := spi.StatusOf(<-held); st != spi.StatusServerTimeout {
				t.Fatalf("held call: %v, want SERVER_TIMEOUT", st)
			}
			// the check's first ping waits 1 s behind the large request,
			// which the link keeps taking in: the channel stays
			time.Sleep(time.Until(start.Add(1700 * time.Millisecond)))
			if r := c.ch.Reason(); r != "" {
				t.Fatalf("closed while the link still took the large request in: %s", r)
			}
			px.BlackHole()
			r, ok := waitReason(c.closed, 6*time.Second)
			if !ok {
				t.Fatal("black-holed 6 s ago with a liveness check kept by acknowledgements, and still open")
			}
			took := time.Since(start)
			t.Logf("closed %v after the start (black hole at 1.7 s): %s", took.Round(time.Millisecond), r)
			if !strings.Contains(r, "liveness check") {
				t.Errorf("closed by %q, want the liveness check", r)
			}
		})
	}
}

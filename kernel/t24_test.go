package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// WaitReady (tester24 finding 8) waits for a first connection that takes
// longer than a call's timeout would allow, and gives up at once when
// every first attempt has ended without one.
func TestT24_WaitReady(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	px.SetConnectDelay(300 * time.Millisecond)
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })

	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?timeout=100ms")
	start := time.Now()
	if !r.WaitReady(ctxT(t)) {
		t.Fatal("WaitReady: false for a provider that connects in 300ms")
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("ready after %v, before the connect delay", d)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatalf("call after WaitReady: %v", err)
	}

	gone := testproxy.New(t, e.URL().Address())
	gone.Down() // nothing listens there: the first attempt is refused at once
	r2 := refer(t, c, "airnode://"+gone.Addr()+"/demo.Echo")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start = time.Now()
	if r2.WaitReady(ctx) {
		t.Fatal("WaitReady: true with nothing listening")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("WaitReady took %v to see a refused first attempt", d)
	}
}

// tester24 finding 9: a call to the only provider, whose first connection
// fails (it accepts and never answers the first ping), said "failed after
// 3 attempts on [A, A, A]" although one connection attempt had waited and
// the two retries had failed at once on its result. A provider this
// process cannot connect to is not asked again at once
// (spi.ErrNotConnected, failover.Repeats): one attempt, said so.
func TestT24_9_NotConnectedIsAskedOnce(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	px.BlackHole()
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?timeout=5s&connect.timeout=300ms")
	_, err := r.Invoke(ctxT(t), "Echo", "x")
	if !errors.Is(err, spi.ErrChannelInactive) || !errors.Is(err, spi.ErrNotConnected) {
		t.Fatalf("err %v; want CHANNEL_INACTIVE, not connected", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "failed after 1 attempt on ["+px.Addr()+"]") {
		t.Fatalf("err %q; want one attempt named", msg)
	}
}

package exchange

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

func pingCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestPingFlood_TooManyPingsClosesChannel: a consumer that sends nothing
// but back-to-back heartbeats is answered until its strikes exceed
// MaxPingStrikes (default 2), then the provider closes the channel with the
// logged reason "too many pings".
func TestPingFlood_TooManyPingsClosesChannel(t *testing.T) {
	f := startServer(t, false, nil) // defaults: 1 s, 2 strikes
	ch := f.dial(nil)
	answered := 0
	var err error
	for range 10 {
		if err = ch.Ping(pingCtx(t)); err != nil {
			break
		}
		answered++
	}
	// ping 1 is free, pings 2 and 3 are strikes 1 and 2, ping 4 closes
	if answered != 3 || spi.StatusOf(err) != spi.StatusChannelInactive {
		t.Fatalf("answered %d pings, then %v; want 3 then CHANNEL_INACTIVE", answered, err)
	}
	if !waitFor(3*time.Second, func() bool { return f.logs.find("too many pings") != "" }) {
		t.Fatal("no \"too many pings\" in the provider's log")
	}
	select {
	case <-ch.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("consumer channel still open")
	}
}

// TestPingFlood_RequestsResetStrikes: pings interleaved with requests never
// strike; with the guard off (negative MinPingInterval) back-to-back pings
// are all answered; pings spaced at MinPingInterval never strike.
func TestPingFlood_RequestsResetStrikes(t *testing.T) {
	t.Run("requests in between", func(t *testing.T) {
		f := startServer(t, false, nil)
		ch := f.dial(nil)
		for i := range 10 {
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatalf("ping %d: %v", i+1, err)
			}
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), 3*time.Second); res.Err != nil {
				t.Fatalf("call %d: %v", i+1, res.Err)
			}
		}
	})
	t.Run("guard off", func(t *testing.T) {
		f := startServer(t, false, func(o *Options) { o.MinPingInterval = -1 })
		ch := f.dial(nil)
		for i := range 20 {
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatalf("ping %d: %v", i+1, err)
			}
		}
	})
	t.Run("spaced at the minimum", func(t *testing.T) {
		f := startServer(t, false, func(o *Options) { o.MinPingInterval = 100 * time.Millisecond; o.MaxPingStrikes = 1 })
		ch := f.dial(nil)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := range 8 {
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatalf("ping %d: %v", i+1, err)
			}
			<-tick.C
		}
		if r := f.logs.find("too many pings"); r != "" {
			t.Fatal(r)
		}
	})
}

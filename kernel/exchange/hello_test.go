package exchange

import (
	"context"
	"strings"
	"sync"
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
// but back-to-back heartbeats is answered through its burst (pingBurst
// pings ahead of the permitted rate) and until its strikes exceed
// MaxPingStrikes (default 2), then the provider closes the channel with the
// logged reason "too many pings".
func TestPingFlood_TooManyPingsClosesChannel(t *testing.T) {
	f := startServer(t, false, nil) // defaults: 1 s, 2 strikes
	ch := f.dial(nil)
	answered := 0
	var err error
	for range 30 {
		if err = ch.Ping(pingCtx(t)); err != nil {
			break
		}
		answered++
	}
	// ping 1 sets the pace, pings 2..pingBurst+1 use the burst, the next
	// two are strikes 1 and 2, the one after closes
	if want := pingBurst + DefaultMaxPingStrikes + 1; answered != want || spi.StatusOf(err) != spi.StatusChannelInactive {
		t.Fatalf("answered %d pings, then %v; want %d then CHANNEL_INACTIVE", answered, err, want)
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

// TestHeartbeatHello: the hello is the URL's heartbeat keys, sorted, and
// nothing else.
func TestHeartbeatHello(t *testing.T) {
	u := spi.MustParse("airnode://h:1/demo.Echo?timeout=5s&heartbeat.retries=3&heartbeat=idle&heartbeat.interval=1s&heartbeats=x")
	if got, want := HeartbeatHello(u), "heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3"; got != want {
		t.Fatalf("HeartbeatHello = %q, want %q", got, want)
	}
	if got := HeartbeatHello(spi.MustParse("airnode://h:1/demo.Echo?timeout=5s")); got != "" {
		t.Fatalf("HeartbeatHello without heartbeat keys = %q", got)
	}
}

// TestHelloExchangedOnFirstPing: a consumer with Options.Hello sends it with
// its first ping only; the provider stores it and answers with its own,
// which the consumer stores; a consumer that pings much faster than its
// advertised interval is answered and logged once; a peer without a hello
// has none.
func TestHelloExchangedOnFirstPing(t *testing.T) {
	var provider *Channel
	var mu sync.Mutex
	f := startServer(t, false, func(o *Options) {
		o.Hello = "heartbeat=dual&heartbeat.interval=2s"
		o.MinPingInterval = -1
		o.Heartbeat = watchFunc(func(ch spi.Channel) func() {
			mu.Lock()
			provider = ch.(*Channel)
			mu.Unlock()
			return func() {}
		})
	})
	ch := f.dial(func(o *Options) { o.Hello = "heartbeat=idle&heartbeat.interval=10s" })
	if _, ok := ch.PeerHeartbeat(); ok {
		t.Fatal("consumer knows the provider's settings before any ping")
	}
	for range pingBurst { // back to back: half the burst used up is logged
		if err := ch.Ping(pingCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	peer, ok := ch.PeerHeartbeat()
	if iv, _ := peer.Param("heartbeat.interval"); !ok || iv != "2s" {
		t.Fatalf("consumer's view of the provider: %v %v", peer, ok)
	}
	// A Server starts a channel's heartbeat watch on a goroutine of its
	// own (startWatch), so the pings above may be answered before the
	// watch, which hands us the provider's channel, has run.
	var p *Channel
	if !waitFor(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		p = provider
		return p != nil
	}) {
		t.Fatal("the provider's heartbeat watch never started")
	}
	peer, ok = p.PeerHeartbeat()
	if s, _ := peer.Param("heartbeat"); !ok || s != "idle" {
		t.Fatalf("provider's view of the consumer: %v %v", peer, ok)
	}
	if n := f.logs.count("much faster than its advertised heartbeat.interval"); n != 1 {
		t.Fatalf("fast pings logged %d times, want once", n)
	}
	if n := f.logs.count("heartbeat strategy mismatch"); n != 1 {
		t.Fatalf("mismatch logged %d times by the provider, want once", n)
	}
	plain := f.dial(nil)
	if err := plain.Ping(pingCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.PeerHeartbeat(); ok {
		t.Fatal("a consumer without a hello got the provider's settings")
	}
}

// watchFunc adapts a function to spi.Heartbeat.
type watchFunc func(spi.Channel) func()

func (f watchFunc) Watch(ch spi.Channel) func() { return f(ch) }

func (s *logSink) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.recs {
		if strings.Contains(r, substr) {
			n++
		}
	}
	return n
}

package exchange

import (
	"log/slog"
	"testing"
)

// The provider's answer to a ping with a hello carries its start
// (Options.Started, KeyHelloTimestamp), on each new connection; the
// consumer keeps it (PeerStarted) and takes it out of the peer's heartbeat
// hello, which stays absent when the provider had no heartbeat key. A
// provider that sends none (older) leaves PeerStarted 0, as does an empty
// first ping (no hello asked for the provider's).
func TestProviderStartInTheHelloAnswer(t *testing.T) {
	const started = 1764493200000
	cases := []struct {
		name      string
		prov      func(*Options)
		cons      func(*Options)
		want      int64
		heartbeat bool // the consumer then has the provider's heartbeat hello
	}{
		{"guard off, no heartbeat keys", func(o *Options) { o.Started, o.MinPingInterval = started, -1 }, func(o *Options) { o.Application = "billing" }, started, false},
		{"with the provider's hello", func(o *Options) { o.Started, o.Hello = started, "heartbeat.min.ping.interval=1s" }, func(o *Options) { o.Hello = "heartbeat=idle" }, started, true},
		{"provider sends none", func(o *Options) { o.Hello = "heartbeat.min.ping.interval=1s" }, func(o *Options) { o.Application = "billing" }, 0, true},
		{"consumer sends no hello", func(o *Options) { o.Started = started }, nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startServer(t, false, tc.prov)
			for conn := range 2 { // each new connection says it
				ch := f.dial(tc.cons)
				if err := ch.Ping(pingCtx(t)); err != nil {
					t.Fatal(err)
				}
				if got := ch.PeerStarted(); got != tc.want {
					t.Fatalf("connection %d: PeerStarted %d, want %d", conn+1, got, tc.want)
				}
				hb, ok := ch.PeerHeartbeat()
				if ok != tc.heartbeat {
					t.Fatalf("connection %d: peer heartbeat hello %v (%v), want present=%v", conn+1, hb, ok, tc.heartbeat)
				}
				if _, has := hb.Param(KeyHelloTimestamp); has {
					t.Fatalf("connection %d: the peer's heartbeat hello kept %s: %v", conn+1, KeyHelloTimestamp, hb)
				}
			}
		})
	}
}

// A malformed start in a provider's hello is logged and ignored: the
// warm-up counts from the registry entry's timestamp.
func TestMalformedProviderStartIgnored(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Hello = "timestamp=soon" })
	sink := &logSink{}
	ch := f.dial(func(o *Options) { o.Application = "billing"; o.Logger = slog.New(sink) })
	if err := ch.Ping(pingCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := ch.PeerStarted(); got != 0 {
		t.Fatalf("PeerStarted %d, want 0", got)
	}
	if sink.find("malformed timestamp in the provider's hello") == "" {
		t.Fatal("no warning of the malformed timestamp")
	}
}

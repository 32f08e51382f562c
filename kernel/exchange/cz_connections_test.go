package exchange

import (
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// Options.Connections (airnode_provider_connections) counts the
// connections a Server serves, as Server.Connections does: +1 per
// consumer connection, -1 once its channel has finished, and not the
// connections refused at the accepts limit.
func TestConnectionsGaugeFollowsServedConnections(t *testing.T) {
	var g counters.Gauge
	f := startServer(t, true, func(o *Options) { o.Connections = &g })
	f.srv.LimitConnections(ConnectionLimit{Max: 2})
	a := f.dial(nil)
	f.dial(nil)
	if !waitFor(5*time.Second, func() bool { return g.Load() == 2 }) {
		t.Fatalf("gauge %d with two consumers connected, want 2", g.Load())
	}
	refused := f.srv.Refused()
	extra := dialSession(t, f.addr(), true) // beyond accepts=2: refused
	defer extra.Close()
	if !waitFor(5*time.Second, func() bool { return f.srv.Refused() > refused }) {
		t.Fatal("the third connection was not refused")
	}
	if n := g.Load(); n != 2 || f.srv.Connections() != 2 {
		t.Fatalf("gauge %d, Connections %d after a refused connection, want 2, 2", n, f.srv.Connections())
	}
	a.Close("test: consumer leaves")
	if !waitFor(5*time.Second, func() bool { return g.Load() == 1 }) {
		t.Fatalf("gauge %d after one consumer left, want 1", g.Load())
	}
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return g.Load() == 0 }) {
		t.Fatalf("gauge %d after the server closed, want 0", g.Load())
	}
}

package zookeeper_test

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestT26_5_ExpiryJudgedFromLastContact (tester26 finding 5): a provider
// whose path to ZooKeeper goes dead (black hole: no FIN, no RST) says its
// session expired — the Warn, its Health error, the expiry counter, the
// opening of a new session — at about session.timeout after its last
// contact with ZooKeeper, when the server expires it and the consumers
// drop the provider. It judged from when go-zookeeper noticed the dead
// connection (its receive timeout, two thirds of session.timeout, after
// the last byte), so it spoke about 1.5 x session.timeout after the
// partition, that much after the consumers had dropped it (18 s with the
// default 30 s). After the heal the entry is back.
func TestT26_5_ExpiryJudgedFromLastContact(t *testing.T) {
	const session = 6 * time.Second
	hole := testproxy.New(t, server.Addr()) // the path that dies
	px := testproxy.New(t, hole.Addr())     // what the provider dials
	var plog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=r26z&session.timeout=6s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	// tester76 #3: the session's changes, as registry watch prints them
	var (
		hookMu sync.Mutex
		hooked []zookeeper.SessionChange
	)
	p.(*zookeeper.Registry).OnSessionChange(func(c zookeeper.SessionChange) {
		hookMu.Lock()
		hooked = append(hooked, c)
		hookMu.Unlock()
	})
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	health := p.(spi.RegistryHealth)
	c := build(t, server.URL("root=r26z"))
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)
	time.Sleep(session / 2) // a few pings: the partition falls anywhere between two

	expiries := counters.Registry.SessionExpiries.Load()
	start := time.Now()
	hole.BlackHole()
	// Watch the consumer's list (the server's expiry), the provider's
	// health and the counter until all three have changed.
	var dropped, unhealthy, counted time.Time
	for deadline := start.Add(3 * session); dropped.IsZero() || unhealthy.IsZero() || counted.IsZero(); {
		now := time.Now()
		if now.After(deadline) {
			t.Fatalf("within %v of the partition: consumer dropped the provider at %v, health error at %v, expiry counted at %v (zero: not yet)",
				3*session, since(start, dropped), since(start, unhealthy), since(start, counted))
		}
		if l, n := rec.last(); dropped.IsZero() && n > 0 && len(l) == 0 {
			dropped = now
		}
		if unhealthy.IsZero() && health.Health() != nil {
			unhealthy = now
		}
		if counted.IsZero() && counters.Registry.SessionExpiries.Load() != expiries {
			counted = now
		}
		time.Sleep(10 * time.Millisecond)
	}
	gone := plog.waitFor(t, time.Second, msgEntriesGone)
	redial := plog.waitFor(t, time.Second, "no session for session.timeout")
	lost := plog.waitFor(t, time.Second, "connection lost")
	t.Logf("after the partition: connection lost noticed %v, consumer dropped the provider %v, expiry warned %v (unheard_for=%s), health %v, counted %v, new session opened %v",
		since(start, lost.at), since(start, dropped), since(start, gone.at), gone.attrs["unheard_for"],
		since(start, unhealthy), since(start, counted), since(start, redial.at))

	// The server expires the session session.timeout after it last heard
	// the client (pings go every session/3), so the consumer drops the
	// provider within session.timeout (+ a tick) of the partition, and the
	// provider must say so then, not 1.33-1.67 x session.timeout after it.
	bound := session + time.Second
	for what, at := range map[string]time.Time{"expiry Warn": gone.at, "Health error": unhealthy, "expiry count": counted, "new session": redial.at} {
		if d := at.Sub(start); d > bound {
			t.Errorf("%s %v after the partition, want within %v (session.timeout %v after the last contact)", what, d.Round(time.Millisecond), bound, session)
		}
		if d := at.Sub(dropped); d > 1500*time.Millisecond || d < -1500*time.Millisecond {
			t.Errorf("%s %v from the consumer's drop of the provider, want within 1.5 s", what, d.Round(time.Millisecond))
		}
	}
	if d, err := time.ParseDuration(gone.attrs["unheard_for"]); err != nil || d < session || d > bound {
		t.Errorf("unheard_for=%q, want session.timeout..%v (since the last contact)", gone.attrs["unheard_for"], bound)
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 1 {
		t.Errorf("SessionExpiries counted %d for one lost session, want 1", n)
	}

	// Heal: the provider's next connection reaches the server.
	px.SetTarget(server.Addr())
	healed := time.Now()
	rec.wait(t, 15*time.Second, 1)
	back := plog.waitFor(t, 5*time.Second, msgEntriesBack)
	took := time.Since(healed)
	t.Logf("entry back at the consumer %v after the heal (Info line %v)", took.Round(time.Millisecond), since(healed, back.at))
	// The new session's connection, dialled into the dead path just
	// before the heal, waits out its handshake bound (connect.timeout 5s
	// cut to two thirds of session.timeout: 4s), then go-zookeeper pauses
	// 1s before its next dial, which reaches the server: about 4.9 s.
	if bound := 4*time.Second + time.Second + 2*time.Second; took > bound {
		t.Errorf("entry back %v after the heal, want within %v (the 4s handshake bound, zk's 1s pause, 2s slack)", took.Round(time.Millisecond), bound)
	}
	if err := health.Health(); err != nil {
		t.Errorf("Health after the entries are back: %v", err)
	}
	hookMu.Lock()
	defer hookMu.Unlock()
	var states []string
	for _, c := range hooked {
		s := c.State
		if c.NewSession {
			s += "(new session)"
		}
		states = append(states, s)
	}
	if got, want := strings.Join(states, " "), "disconnected expired connected(new session)"; got != want {
		t.Errorf("OnSessionChange saw %q, want %q", got, want)
	}
	for _, c := range hooked {
		if c.State == zookeeper.SessionExpired && c.Unheard < session {
			t.Errorf("expired with Unheard %v, want at least session.timeout %v", c.Unheard, session)
		}
	}
}

// since is at - start rounded, or 0 for a zero at.
func since(start, at time.Time) time.Duration {
	if at.IsZero() {
		return 0
	}
	return at.Sub(start).Round(time.Millisecond)
}

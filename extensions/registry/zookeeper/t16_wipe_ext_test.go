package zookeeper_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestT16_1_EmptyDataRestart (tester16 finding 1): ZooKeeper restarted
// with an empty data directory under a running provider and a running
// consumer. The server refuses a client that has seen a higher zxid than
// its own, so the old handle would redial forever; the registry drops it
// once the server has refused it twice (TestWipedServerRefusal...; at
// the latest once there has been no session for session.timeout), opens a new session
// from zxid 0, re-creates the provider's entry (saying so at Info) and
// re-arms the consumer's watch, which then sees a provider registered
// after the wipe.
func TestT16_1_EmptyDataRestart(t *testing.T) {
	const q = "root=t16w&session.timeout=2s&connect.timeout=1s"
	p, plog := registeredProvider(t, server.URL(q))
	c := build(t, server.URL(q))
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)

	expiries := counters.Registry.SessionExpiries.Load()
	restarted := wipeZooKeeper(t, p, c)

	raw := rawClient(t)
	deadline := restarted.Add(2*time.Second + 15*time.Second)
	for {
		ch, _, err := raw.Children("/t16w/demo.Echo/providers")
		if err == nil && len(ch) == 1 {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(server.LogPath())
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Fatalf("provider entry not back within %v of the restart: %v %v\nserver log tail:\n%s", time.Since(restarted), ch, err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("provider entry back %v after the restart", time.Since(restarted).Round(10*time.Millisecond))
	plog.waitFor(t, 5*time.Second, msgEntriesBack)

	p2 := build(t, server.URL(q))
	if err := p2.Register(ctx(t), provider(2, "")); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 15*time.Second, 1, 2)
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 2 {
		t.Errorf("session expiries counted: %d, want 2 (the provider's and the consumer's)", n)
	}
}

// TestT16_9_SessionExpiryCounted (tester16 finding 9): once a provider
// has said "session expired" at Warn, airnode_registry_session_expiries_total
// (counters.Registry.SessionExpiries) has counted it, although no new
// session has come yet (it counted only new sessions, which never came in
// finding 1); the new session does not count the same expiry again.
func TestT16_9_SessionExpiryCounted(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	p, plog := registeredProvider(t, "zookeeper://"+px.Addr()+"?root=t16c&session.timeout=1s")
	before := counters.Registry.SessionExpiries.Load()
	// A dead path to a ZooKeeper that serves others: dials that reach
	// nothing answering (no refusal), so the session is judged by
	// session.timeout since the last contact. (Dials refused, px.Down(),
	// are a ZooKeeper that is down, which expires nobody: tester89 #1;
	// a proxy that accepts and closes, unreachable(px), looks like a
	// server that is not serving, which keeps the session however long
	// since f7a8d1d: no expiry to count either.)
	px.SetTarget(testproxy.Hung(t))
	px.Cut()
	plog.waitFor(t, 10*time.Second, msgEntriesGone)
	if held := plog.find("ZooKeeper is down"); len(held) != 0 {
		t.Errorf("a dead path was taken for a ZooKeeper that is down: %q", held[0].msg)
	}
	if n := counters.Registry.SessionExpiries.Load() - before; n != 1 {
		t.Errorf("after the expiry Warn, %d expiries counted, want 1", n)
	}
	h, ok := p.(spi.RegistryHealth)
	if !ok {
		t.Fatalf("%T does not implement spi.RegistryHealth", p)
	}
	if err := h.Health(); err == nil || !strings.Contains(err.Error(), "demo.Echo") {
		t.Errorf("Health after the expiry Warn: %v, want an error naming demo.Echo", err)
	}
	px.SetTarget(server.Addr())
	plog.waitFor(t, 15*time.Second, msgEntriesBack)
	if err := h.Health(); err != nil {
		t.Errorf("Health after the entries are back: %v, want nil", err)
	}
	if n := counters.Registry.SessionExpiries.Load() - before; n != 1 {
		t.Errorf("after the new session, %d expiries counted, want 1", n)
	}
}

// registeredProvider builds a ZooKeeper registry on url whose log lines
// the returned lineLog keeps, closed when the test ends, and registers
// provider 1 in it.
func registeredProvider(t *testing.T, url string) (spi.Registry, *lineLog) {
	t.Helper()
	plog := new(lineLog)
	p, err := zookeeper.Builder{Logger: slog.New(plog)}.Build(spi.MustParse(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	return p, plog
}

// wipeZooKeeper raises the server's zxid, lets each of regs see it (a
// Lookup), then stops the server, removes its data and starts it again:
// a ZooKeeper restarted with empty data, which refuses their sessions
// (their clients have seen a higher zxid than its own). It returns when
// the server serves again, and that time.
func wipeZooKeeper(t *testing.T, regs ...spi.Registry) time.Time {
	t.Helper()
	raw := rawClient(t)
	for i := 0; i < 50; i++ {
		if _, err := raw.Create("/wipe-bump", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if err := raw.Delete("/wipe-bump", -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range regs {
		if _, err := r.Lookup(ctx(t), consumer); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	server.Stop()
	t.Cleanup(func() { _ = server.Restart() })
	if err := os.RemoveAll(server.DataDir()); err != nil {
		t.Fatal(err)
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

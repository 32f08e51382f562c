package zookeeper_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
)

// TestAQ_QueuedEntryUnregisterAndCreation (tester81 #4, #5): with
// check=false and ZooKeeper down, a provider's Register queues its
// entry. Unregistering it before any session came removed it from the
// queue but said, as spi.ErrNotWithdrawn, that "its entry stays listed
// until ZooKeeper expires this session" (serve then waited shutdown-wait
// for it): no node of it was ever created, so it is a success, said at
// Info. An entry the same registry created in its session before
// ZooKeeper went down still is ErrNotWithdrawn (that session holds its
// node). A queued entry, once a session creates it, is said at Info with
// how long it was queued (nothing was said). A real ZooKeeper, stopped,
// then started again.
func TestAQ_QueuedEntryUnregisterAndCreation(t *testing.T) {
	zkS, err := zktest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zkS.Close)
	var plog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + zkS.Addr() + "?root=aqqueued&check=false&connect.timeout=1s&session.timeout=30s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	created := provider(5, "")
	if err := p.Register(ctx(t), created); err != nil {
		t.Fatal(err)
	}
	zkS.Stop()
	// the session's loss noticed first: a Register that still sees the
	// session tries its create and queues the entry as maybe created
	plog.waitFor(t, 10*time.Second, "connection lost")
	for _, u := range []spi.URL{provider(1, ""), provider(2, "")} {
		if err := p.Register(ctx(t), u); err != nil {
			t.Fatalf("Register %v with check=false and ZooKeeper down: %v; want nil (queued)", u, err)
		}
	}
	if n := len(plog.find("no session yet; entry will be created when one is")); n != 2 {
		t.Fatalf("%d queued lines; want 2 (both entries queued)", n)
	}

	if err := p.Unregister(ctx(t), provider(1, "")); err != nil {
		t.Errorf("Unregister of an entry queued and never created: %v; want nil (nothing to remove)", err)
	}
	l := plog.waitFor(t, time.Second, "unregistered demo.Echo: its entry was never created in ZooKeeper")
	if l.level != slog.LevelInfo || l.attrs["url"] != provider(1, "").String() || l.attrs["queued_for"] == "" {
		t.Errorf("never-created line: %v %q %v; want INFO with url and queued_for", l.level, l.msg, l.attrs)
	}
	if err := p.Unregister(ctx(t), created); !errors.Is(err, spi.ErrNotWithdrawn) {
		t.Errorf("Unregister of an entry created in the lost session: %v; want spi.ErrNotWithdrawn (its node stays until the session expires)", err)
	}

	start := time.Now()
	if err := zkS.Restart(); err != nil {
		t.Fatal(err)
	}
	l = plog.waitFor(t, 30*time.Second, "queued provider entry of demo.Echo created in ZooKeeper after ")
	if l.level != slog.LevelInfo || l.attrs["url"] != provider(2, "").String() {
		t.Errorf("created line: %v %q %v; want INFO naming provider 2", l.level, l.msg, l.attrs)
	}
	if d, err := time.ParseDuration(l.attrs["queued_for"]); err != nil || d+time.Millisecond < l.at.Sub(start) || d > time.Minute {
		t.Errorf("created line: queued_for=%q; want the outage, at least %v", l.attrs["queued_for"], l.at.Sub(start))
	}
	if n := len(plog.find("queued provider entry of")); n != 1 {
		t.Errorf("%d created lines; want 1 (provider 1 was unregistered)", n)
	}
	raw, _, err := zk.Connect([]string{zkS.Addr()}, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	waitFor(t, func() bool {
		ch, _, err := raw.Children("/aqqueued/demo.Echo/providers")
		return err == nil && len(ch) == 1 && ch[0] == nodeName(provider(2, ""))
	})
}

package zookeeper_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
)

// TestAL1_QueuedEntryIsAHealthWarning (tester80 #1): a provider whose
// ZooKeeper is down when it registers, with check=false, queues its
// entry; Register returns nil and the entry is in no ZooKeeper, so no
// consumer can find the provider. Health said nothing (airnode serve
// reported ready with no warning). Once connect.timeout has passed
// without a session, Health names the service and says the entry is not
// in ZooKeeper, the Warn is repeated (each minute; here, shortened)
// while it lasts, and once ZooKeeper is started and a session has
// created the entry, Health is nil again. A real ZooKeeper, stopped,
// then started on the same port.
func TestAL1_QueuedEntryIsAHealthWarning(t *testing.T) {
	zkS, err := zktest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zkS.Close)
	zkS.Stop()
	zookeeper.SetQueuedWarnEvery(t, time.Second)
	var plog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + zkS.Addr() + "?root=al1queued&check=false&connect.timeout=1s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	rh := p.(spi.RegistryHealth)
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatalf("Register with check=false and ZooKeeper down: %v; want nil (queued)", err)
	}
	plog.waitFor(t, 5*time.Second, "no session yet; entry will be created when one is")
	herr := rh.Health()
	if herr == nil {
		t.Fatal("Health is nil while the provider's only entry is queued, in no ZooKeeper")
	}
	t.Logf("Health while queued: %v", herr)
	for _, want := range []string{"demo.Echo", "not in ZooKeeper", "queued", "no session for", "connection refused"} {
		if !strings.Contains(herr.Error(), want) {
			t.Errorf("Health %q does not say %q", herr, want)
		}
	}
	again := plog.waitFor(t, 10*time.Second, "still no session; provider entries of demo.Echo are not in ZooKeeper")
	if again.level != slog.LevelWarn {
		t.Errorf("the repeated line is at %v; want WARN", again.level)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := len(plog.find("still no session")); n < 2 || n > 4 {
		t.Errorf("%d repeated Warns over about 2.5s at one a second; want 2 to 4", n)
	}
	if err := rh.Health(); err == nil {
		t.Fatal("Health went nil while ZooKeeper is still down")
	}

	if err := zkS.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return rh.Health() == nil })
	raw, _, err := zk.Connect([]string{zkS.Addr()}, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ch, _, err := raw.Children("/al1queued/demo.Echo/providers")
	if err != nil || len(ch) != 1 {
		t.Fatalf("providers once Health is nil: %v, %v; want the entry", ch, err)
	}
	n := len(plog.find("still no session"))
	time.Sleep(2 * time.Second)
	if m := len(plog.find("still no session")); m != n {
		t.Errorf("%d more repeated Warns after the entry was created; want none", m-n)
	}
}

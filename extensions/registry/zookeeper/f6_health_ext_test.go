package zookeeper_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/spi"
)

// TestF6_UnpublishedEntryIsAHealthWarning (tester nu53 finding 1): a
// provider whose own entry is gone from ZooKeeper and cannot be
// re-created while its session is up (deleted by another client under a
// providers node whose ACL no longer lets the provider create) said
// nothing through Health: airnode serve kept airnode_health_warning 0.
// Health names the service and the failure while the entry is missing,
// and is nil again once the provider has re-created it.
func TestF6_UnpublishedEntryIsAHealthWarning(t *testing.T) {
	const root = "f6health"
	p, plog := registeredProvider(t, server.URL("root="+root))
	rh, ok := p.(spi.RegistryHealth)
	if !ok {
		t.Fatal("the zookeeper registry does not implement spi.RegistryHealth")
	}
	if err := rh.Health(); err != nil {
		t.Fatalf("Health of a registered provider: %v; want nil", err)
	}
	raw := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	ch, _, err := raw.Children(dir)
	if err != nil || len(ch) != 1 {
		t.Fatalf("providers after Register: %v, %v; want 1", ch, err)
	}
	// The providers node lets anyone read, delete and set ACLs, no longer create.
	if _, err := raw.SetACL(dir, zk.WorldACL(zk.PermRead|zk.PermDelete|zk.PermAdmin), -1); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = raw.SetACL(dir, zk.WorldACL(zk.PermAll), -1) }()
	if err := raw.Delete(dir+"/"+ch[0], -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return rh.Health() != nil })
	herr := rh.Health()
	t.Logf("Health while the entry cannot be re-created: %v", herr)
	if msg := herr.Error(); !strings.Contains(msg, "demo.Echo") || !strings.Contains(msg, "not in ZooKeeper") || !strings.Contains(msg, "not authenticated") {
		t.Errorf("Health %q: want it to name demo.Echo, say it is not in ZooKeeper, and why (zk: not authenticated)", msg)
	}
	// Retried every 200 ms: still a warning through several retries (a
	// retry does not clear it while it runs).
	for range 100 {
		if err := rh.Health(); err == nil {
			t.Fatal("Health went nil while the entry still cannot be created")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(plog.find("entry was deleted from ZooKeeper by someone else; cannot re-create it")) == 0 {
		t.Error("no Warn that the entry cannot be re-created")
	}

	// Creation allowed again: the entry is back, the warning gone.
	if _, err := raw.SetACL(dir, zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		ch, _, _ := raw.Children(dir)
		return len(ch) == 1 && rh.Health() == nil
	})
	ch2, _, _ := raw.Children(dir)
	if !slices.Equal(ch, ch2) {
		t.Errorf("entry back as %v; want %v", ch2, ch)
	}
	// Unregistered: no warning either.
	if err := p.Unregister(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	if err := rh.Health(); err != nil {
		t.Errorf("Health after Unregister: %v; want nil", err)
	}
}

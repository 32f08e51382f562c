package zookeeper_test

import (
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const msgRecreated = "provider entry "

// TestOwnEntryDeletedIsRecreated (tester46 finding 3): a provider's entry
// deleted by another ZooKeeper client (zkCli delete) is re-created by the
// provider at once, with one Warn per deletion; it stayed deleted (the
// provider silently out of discovery until its session ended). An entry
// the provider unregistered stays deleted, and so does one deleted after
// Close.
func TestOwnEntryDeletedIsRecreated(t *testing.T) {
	const root = "ownre"
	p, plog := registeredProvider(t, server.URL("root="+root))
	raw := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	children := func() []string {
		t.Helper()
		ch, _, err := raw.Children(dir)
		if err != nil && err != zk.ErrNoNode {
			t.Fatal(err)
		}
		return ch
	}
	ch := children()
	if len(ch) != 1 {
		t.Fatalf("providers after Register: %v, want 1", ch)
	}
	node := dir + "/" + ch[0]
	for i := 1; i <= 3; i++ {
		if err := raw.Delete(node, -1); err != nil {
			t.Fatal(err)
		}
		deleted := time.Now()
		for !slices.Contains(children(), ch[0]) {
			if time.Since(deleted) > time.Second {
				t.Fatalf("deletion %d: entry not re-created within 1s", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("deletion %d: entry back after %v", i, time.Since(deleted).Round(time.Millisecond))
		// The entry can be back before its Warn is written (checkpoint
		// CI, under load: 2 lines after the third deletion): wait for
		// the i-th line, then make sure no extra one comes.
		for n := len(plog.find(msgRecreated)); n < i; n = len(plog.find(msgRecreated)) {
			if time.Since(deleted) > 5*time.Second {
				t.Fatalf("after %d deletions: %d re-created Warns within 5 s, want %d", i, n, i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n := len(plog.find(msgRecreated)); n != i {
			t.Fatalf("after %d deletions: %d re-created Warns, want %d", i, n, i)
		}
	}
	w := plog.find(msgRecreated)[0]
	if w.level.String() != "WARN" || w.attrs["url"] != provider(1, "").String() {
		t.Errorf("re-created line: level %v url %q, want WARN %q", w.level, w.attrs["url"], provider(1, "").String())
	}
	_, stat, err := raw.Get(node)
	if err != nil {
		t.Fatal(err)
	}
	if stat.EphemeralOwner == 0 || stat.EphemeralOwner == raw.SessionID() {
		t.Errorf("re-created entry's owner 0x%x: want the provider's session", stat.EphemeralOwner)
	}

	// Editing the entry's data is left alone and still guarded.
	if _, err := raw.Set(node, []byte("edited"), -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := raw.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(plog.find(msgRecreated)) == 4 && len(children()) == 1 })

	// Unregistered: stays deleted.
	if err := p.Unregister(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if ch := children(); len(ch) != 0 {
		t.Fatalf("providers 1s after Unregister: %v, want none", ch)
	}
	if n := len(plog.find(msgRecreated)); n != 4 {
		t.Errorf("%d re-created Warns after Unregister, want 4", n)
	}

	// Registered again: guarded again.
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	if err := raw.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(plog.find(msgRecreated)) == 5 && len(children()) == 1 })

	// Closed: its entry goes and stays gone.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if ch := children(); len(ch) != 0 {
		t.Fatalf("providers 1s after Close: %v, want none", ch)
	}
}

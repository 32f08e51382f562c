package zookeeper_test

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

const msgRemovedForeign = "removed a provider entry at this provider's address that is not its own"

// providersOf lists the children of dir with each one's ephemeral owner.
func providersOf(t *testing.T, raw *zk.Conn, dir string) map[string]int64 {
	t.Helper()
	ch, _, err := raw.Children(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range ch {
		_, st, err := raw.Exists(dir + "/" + c)
		if err == nil && st != nil {
			out[c] = st.EphemeralOwner
		}
	}
	return out
}

// TestU2_HandMadeCopyAtProvidersAddressIsRemoved (tester74 #2): an
// operator deletes a provider's node and writes, as a persistent node, the
// same URL with weight=300. The provider re-created its own node, and the
// hand-made one stayed beside it (consumers picked it: 75 % of the calls
// to that provider); now the provider removes it, with one Warn, and one
// node is left: the provider's own, at its own weight, ephemeral.
func TestU2_HandMadeCopyAtProvidersAddressIsRemoved(t *testing.T) {
	const root = "u2hand"
	plog := new(lineLog)
	p := buildLogged(t, server.URL("root="+root), plog)
	mine := provider(29002, "&weight=100")
	if err := p.Register(ctx(t), mine); err != nil {
		t.Fatal(err)
	}
	raw := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	own := nodeName(mine)
	if err := raw.Delete(dir+"/"+own, -1); err != nil {
		t.Fatal(err)
	}
	plog.waitFor(t, 5*time.Second, msgRecreated)
	copyName := nodeName(provider(29002, "&weight=300"))
	if _, err := raw.Create(dir+"/"+copyName, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	plog.waitFor(t, 5*time.Second, msgRemovedForeign)
	got := providersOf(t, raw, dir)
	if len(got) != 1 || got[own] == 0 || got[own] == raw.SessionID() {
		t.Fatalf("providers after the hand-made copy: %v, want only the provider's own ephemeral %s", got, own)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(plog.find(msgRemovedForeign)); n != 1 {
		t.Errorf("%d removal Warns, want 1", n)
	}
	w := plog.find(msgRemovedForeign)[0]
	if w.level.String() != "WARN" || !strings.HasSuffix(w.attrs["path"], copyName) || !strings.Contains(w.msg, "persistent node") {
		t.Errorf("removal line: %v %q %v, want WARN naming the persistent node", w.level, w.msg, w.attrs)
	}

	// A persistent node of the provider's very name, written between the
	// delete and the re-creation, is replaced by the provider's own.
	if err := raw.Delete(dir+"/"+own, -1); err != nil {
		t.Fatal(err)
	}
	_, _ = raw.Create(dir+"/"+own, []byte("hand"), 0, zk.WorldACL(zk.PermAll))
	deadline := time.Now().Add(5 * time.Second)
	for {
		got = providersOf(t, raw, dir)
		if len(got) == 1 && got[own] != 0 && got[own] != raw.SessionID() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("providers after a persistent node of the provider's name: %v, want the provider's ephemeral", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestU2_RegisterRemovesForeignEntriesOfItsAddress (tester74 #2): a
// provider registering removes the entries at its address and service
// key that are not its session's (a persistent copy, an earlier process's
// ephemeral node), and leaves those of other addresses and service keys.
func TestU2_RegisterRemovesForeignEntriesOfItsAddress(t *testing.T) {
	const root = "u2reg"
	raw := rawClient(t)
	other := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	for _, p := range []string{"/" + root, "/" + root + "/demo.Echo", dir} {
		_, _ = raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	persistent := nodeName(provider(29002, "&weight=300"))
	earlier := nodeName(provider(29002, "&pid=1"))
	otherAddr := nodeName(provider(29001, ""))
	otherVersion := nodeName(provider(29002, "&version=2.0"))
	for _, n := range []string{persistent, otherAddr, otherVersion} {
		if _, err := raw.Create(dir+"/"+n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Create(dir+"/"+earlier, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	plog := new(lineLog)
	p := buildLogged(t, server.URL("root="+root), plog)
	mine := provider(29002, "&weight=100")
	if err := p.Register(ctx(t), mine); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var names []string
	for {
		names = names[:0]
		for n := range providersOf(t, raw, dir) {
			names = append(names, n)
		}
		if len(names) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	sort.Strings(names)
	want := []string{nodeName(mine), otherAddr, otherVersion}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("providers after Register:\n%v\nwant\n%v", names, want)
	}
	if n := len(plog.find(msgRemovedForeign)); n != 2 {
		t.Errorf("%d removal Warns, want 2 (one per node)", n)
	}
}

// TestU2_ConsumerPrefersTheLiveEntry (tester74 #2): a persistent node at
// a live provider's address and service key, which the provider has not
// removed (written while it watched only its own node), is left out of
// what consumers get, in favour of the provider's ephemeral entry, said
// once at Warn, and listed by Invalid (registry ls).
func TestU2_ConsumerPrefersTheLiveEntry(t *testing.T) {
	const root = "u2live"
	p := build(t, server.URL("root="+root))
	mine := provider(29002, "&weight=100")
	if err := p.Register(ctx(t), mine); err != nil {
		t.Fatal(err)
	}
	raw := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	copyName := nodeName(provider(29002, "&weight=300").With("timestamp", "1800000000000"))
	if _, err := raw.Create(dir+"/"+copyName, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	clog := new(lineLog)
	c := buildLogged(t, server.URL("root="+root), clog)
	list, err := c.Lookup(ctx(t), consumer)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ParamOr("weight", "") != "100" {
		t.Fatalf("Lookup: %v, want the provider's own entry (weight 100) only", list)
	}
	if _, err := c.Lookup(ctx(t), consumer); err != nil {
		t.Fatal(err)
	}
	if n := len(clog.find("a persistent provider node at the address of a live provider")); n != 1 {
		t.Errorf("%d Warns of the persistent node, want 1 for two reads", n)
	}
	inv, err := c.(interface {
		Invalid(context.Context, spi.URL) ([]zookeeper.Invalid, error)
	}).Invalid(ctx(t), consumer)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv) != 1 || inv[0].Name != copyName || !strings.Contains(inv[0].Why, "persistent node") {
		t.Errorf("Invalid: %+v, want the persistent node", inv)
	}
}

// buildLogged builds a ZooKeeper registry on rawURL logging to log,
// closed when the test ends.
func buildLogged(t *testing.T, rawURL string, log *lineLog) spi.Registry {
	t.Helper()
	r, err := zookeeper.Builder{Logger: slog.New(log)}.Build(spi.MustParse(rawURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

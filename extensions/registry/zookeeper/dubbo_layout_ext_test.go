package zookeeper_test

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// zkEntries reads the entries under path as Dubbo Admin does: every child
// name decoded once into a URL, which must equal the node's data.
func zkEntries(t *testing.T, c *zk.Conn, path string) []spi.URL {
	t.Helper()
	children, _, err := c.Children(path)
	if err != nil {
		t.Fatalf("ls %s: %v", path, err)
	}
	var out []spi.URL
	for _, ch := range children {
		s, err := url.QueryUnescape(ch)
		if err != nil {
			t.Fatalf("%s/%s does not decode: %v", path, ch, err)
		}
		u, err := spi.Parse(s)
		if err != nil {
			t.Fatalf("%s/%s: %v", path, ch, err)
		}
		data, _, err := c.Get(path + "/" + ch)
		if err != nil || string(data) != s {
			t.Errorf("%s/%s holds %q (%v), want the URL it is named by", path, ch, data, err)
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b spi.URL) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Tester14 #4: the layout is Dubbo's. With root=/dubbo, a provider of
// group gray, version 2.0.0 and one of no group, version 1.0.0 are both
// under /dubbo/demo.Echo/providers, as Dubbo Admin reads it, each URL
// naming its interface, category, group and version; a consumer of
// group=gray sees only gray's; a group=* reference's consumer entry is
// under /dubbo/demo.Echo/consumers and leaves no "*" node; Services
// derives the service keys from the providers' URLs; a node of the
// earlier airnode layout (named by service key) is not read.
func TestT14_4_DubboLayout(t *testing.T) {
	p := build(t, server.URL("root=/dubbo&session.timeout=5s"))
	gray := spi.MustParse("airnode://127.0.0.1:26102/demo.Echo?side=provider&group=gray&version=2.0.0&timestamp=1700000000000")
	def := spi.MustParse("airnode://127.0.0.1:26101/demo.Echo?side=provider&version=1.0.0&timestamp=1700000000000")
	for _, u := range []spi.URL{gray, def} {
		if err := p.Register(ctx(t), u); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawClient(t)
	// An entry of the earlier layout, left by an older airnode.
	old := "/dubbo/" + url.QueryEscape("old/demo.Echo:3.0.0") + "/providers"
	for _, n := range []string{"/dubbo", "/dubbo/" + url.QueryEscape("old/demo.Echo:3.0.0"), old} {
		if _, err := raw.Create(n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	oldURL := "airnode://127.0.0.1:26103/demo.Echo?group=old&side=provider&version=3.0.0"
	if _, err := raw.Create(old+"/"+url.QueryEscape(oldURL), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	entries := zkEntries(t, raw, "/dubbo/demo.Echo/providers")
	if len(entries) != 2 {
		t.Fatalf("/dubbo/demo.Echo/providers holds %v, want the gray and the default provider", entries)
	}
	for _, e := range entries {
		want := map[string]string{spi.KeyInterface: "demo.Echo", zookeeper.KeyCategory: "providers", spi.KeySide: "provider", spi.KeyVersion: "1.0.0"}
		if e.Port() == 26102 {
			want[spi.KeyGroup], want[spi.KeyVersion] = "gray", "2.0.0"
		} else if _, ok := e.Param(spi.KeyGroup); ok {
			t.Errorf("default provider's entry %s has a group", e)
		}
		for k, v := range want {
			if got, _ := e.Param(k); got != v {
				t.Errorf("entry %s: %s=%q, want %q", e, k, got, v)
			}
		}
	}

	c := build(t, server.URL("root=dubbo&session.timeout=5s"))
	grayConsumer := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&group=gray&version=2.0.0")
	if l, err := c.Lookup(ctx(t), grayConsumer); err != nil || len(l) != 1 || !l[0].Equal(gray) {
		t.Fatalf("group=gray Lookup = %v, %v; want exactly %v (as registered)", l, err, gray)
	}
	subscribe(t, c, grayConsumer).wait(t, 10*time.Second, 26102)
	subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&version=1.0.0")).wait(t, 10*time.Second, 26101)
	subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&group=*&version=*")).wait(t, 10*time.Second, 26101, 26102)
	subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&group=gray,blue&version=2.0.0,1.0.0")).wait(t, 10*time.Second, 26102)
	if l, err := c.Lookup(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")); err != nil || len(l) != 0 {
		t.Fatalf("no-group no-version Lookup = %v, %v; want none (both providers have a version)", l, err)
	}
	if _, err := c.Lookup(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Echo?group=a*")); err == nil || !strings.Contains(err.Error(), "is a pattern") {
		t.Fatalf("group=a* Lookup: %v, want the pattern refused", err)
	}

	anyRef := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&group=*&version=*&pid=7")
	if err := c.Register(ctx(t), anyRef); err != nil {
		t.Fatal(err)
	}
	cons := zkEntries(t, raw, "/dubbo/demo.Echo/consumers")
	if len(cons) != 1 || cons[0].ParamOr(zookeeper.KeyCategory, "") != "consumers" || cons[0].ParamOr(spi.KeyInterface, "") != "demo.Echo" || cons[0].ParamOr(spi.KeyGroup, "") != "*" {
		t.Fatalf("/dubbo/demo.Echo/consumers = %v, want the group=* consumer with interface and category=consumers", cons)
	}
	roots, _, err := raw.Children("/dubbo")
	slices.Sort(roots)
	if err != nil || !slices.Equal(roots, []string{"demo.Echo", url.QueryEscape("old/demo.Echo:3.0.0")}) {
		t.Fatalf("/dubbo holds %v (%v); want demo.Echo (and the old entry), no '*' node", roots, err)
	}

	keys, err := c.Services(ctx(t))
	if want := []string{"demo.Echo:1.0.0", "gray/demo.Echo:2.0.0"}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("Services = %v, %v; want %v (the old layout's node not read)", keys, err, want)
	}
	if l, err := c.Lookup(ctx(t), spi.MustParse("airnode:///demo.Echo?group=old&version=3.0.0")); err != nil || len(l) != 0 {
		t.Fatalf("Lookup of the old layout's key = %v, %v; want none", l, err)
	}
}

// A file.cache written by the earlier layout (keyed by service key) does
// not break a consumer of this one: while ZooKeeper is down, a key of no
// group and no version (the interface's name, the same in both layouts)
// is read, and keys naming a group or version are ignored.
func TestOldLayoutCacheIsIgnored(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.json")
	plain := provider(7, "")
	grayP := provider(8, "&group=gray&version=2.0.0")
	raw := `{"lists": {"demo.Echo": ["` + plain.String() + `"], "gray/demo.Echo:2.0.0": ["` + grayP.String() + `"], "*/demo.Echo:*": []}}`
	if err := writeFile(cache, raw); err != nil {
		t.Fatal(err)
	}
	c := build(t, "zookeeper://"+deadAddr(t)+"?connect.timeout=200ms&session.timeout=4s&file.cache="+url.QueryEscape(cache)).(*zookeeper.Registry)
	if l, err := c.Lookup(ctx(t), consumer); err != nil || !hasPorts(l, []int{7}) {
		t.Fatalf("Lookup = %v, %v; want the plain key's list", l, err)
	}
	if l, err := c.Lookup(ctx(t), spi.MustParse("airnode:///demo.Echo?group=gray&version=2.0.0")); err != nil || len(l) != 0 {
		t.Fatalf("gray Lookup = %v, %v; want none (the old service-key entry is not read)", l, err)
	}
	if keys, err := c.Services(ctx(t)); err != nil || !slices.Equal(keys, []string{"demo.Echo"}) {
		t.Fatalf("Services = %v, %v; want [demo.Echo]", keys, err)
	}
}

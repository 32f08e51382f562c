package zookeeper_test

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// Tester70 #3: a provider's node name is its URL as Dubbo's
// toFullString writes it (a methods list's commas, an address's colon, a
// path's slashes as they are), encoded once: "methods%3DEcho%2CFail",
// which a Dubbo reader (Dubbo Admin) decodes in one step. It was the
// spi.URL form encoded again, "methods%3DEcho%252CFail": one method named
// "Echo%2CFail" to such a reader. airnode's own consumer reads the
// methods back, and a value holding '&', '+' or '%' reads back the same.
func TestT70_NodeNameIsDubbosFullString(t *testing.T) {
	p := build(t, server.URL("root=/t70&session.timeout=5s"))
	u := spi.MustParse("airnode://127.0.0.1:26170/demo.Echo?side=provider&methods=Echo,Fail,Info&timestamp=1700000000000&application=a:b/c").
		With("odd", "p+q&r=s%2C")
	if err := p.Register(ctx(t), u); err != nil {
		t.Fatal(err)
	}
	raw := rawClient(t)
	children, _, err := raw.Children("/t70/demo.Echo/providers")
	if err != nil || len(children) != 1 {
		t.Fatalf("providers: %v, %v", children, err)
	}
	name := children[0]
	if !strings.Contains(name, "methods%3DEcho%2CFail%2CInfo") || strings.Contains(name, "%252C") || !strings.Contains(name, "application%3Da%3Ab%2Fc") {
		t.Fatalf("node name %s; want Dubbo's form (methods%%3DEcho%%2CFail..., no %%252C)", name)
	}
	once, err := url.QueryUnescape(name)
	if err != nil || !strings.Contains(once, "methods=Echo,Fail,Info") {
		t.Fatalf("decoded once: %q, %v; want methods=Echo,Fail,Info", once, err)
	}
	c := build(t, server.URL("root=/t70&session.timeout=5s"))
	l, err := c.Lookup(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"))
	if err != nil || len(l) != 1 {
		t.Fatalf("Lookup: %v, %v", l, err)
	}
	for k, want := range map[string]string{"methods": "Echo,Fail,Info", "application": "a:b/c", "odd": "p+q&r=s%2C"} {
		if got := l[0].ParamOr(k, ""); got != want {
			t.Errorf("read back %s=%q, want %q", k, got, want)
		}
	}
	subscribe(t, c, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")).wait(t, 10*time.Second, 26170)
	if err := p.Unregister(ctx(t), u); err != nil {
		t.Fatal(err)
	}
	if children, _, _ := raw.Children("/t70/demo.Echo/providers"); len(children) != 0 {
		t.Fatalf("after Unregister: %v", children)
	}
}

// Tester70 #2: a Dubbo Admin override (disable) under configurators/
// had no effect and no tool said so. A consumer's first subscription to
// the interface now logs it at WARN, naming the node and the count.
func TestT70_2_DubboAdminOverridesAreWarnedAbout(t *testing.T) {
	raw := rawClient(t)
	for _, n := range []string{"/t70b", "/t70b/demo.Echo", "/t70b/demo.Echo/configurators"} {
		if _, err := raw.Create(n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	rule := url.QueryEscape("override://127.0.0.1:27101/demo.Echo?category=configurators&disabled=true&dynamic=false&enabled=true")
	if _, err := raw.Create("/t70b/demo.Echo/configurators/"+rule, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	b := zookeeper.Builder{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	c, err := b.Build(spi.MustParse(server.URL("root=/t70b&session.timeout=5s")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.Subscribe(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), func([]spi.URL) {})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "/t70b/demo.Echo/configurators are not applied by airnode") || !strings.Contains(out, "rules=1") {
		t.Fatalf("no warning of the override in:\n%s", out)
	}
}

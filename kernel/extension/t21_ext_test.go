package extension_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// Tester21 F: an extension may declare Secret only a key whose mark hides
// no key another extension (or the kernel) declares without Secret; the
// later of two such extensions is refused, in any catalogs of the process.

// t21Keys declares keys; secret lists those it declares Secret.
type t21Keys struct {
	keys   []string
	secret bool
}

func (k t21Keys) Keys() []spi.KeyDoc {
	var out []spi.KeyDoc
	for _, key := range k.keys {
		out = append(out, spi.KeyDoc{Key: key, Type: spi.KeyTypeString, Doc: "t21", Secret: k.secret})
	}
	return out
}

// t21Filter is a filter named name declaring keys (all Secret or none).
type t21Filter struct {
	extensiontest.Filter
	t21Keys
}

func newT21Filter(name string, secret bool, keys ...string) *t21Filter {
	return &t21Filter{Filter: extensiontest.Filter{Ext: extensiontest.Ext{ExtName: name}}, t21Keys: t21Keys{keys: keys, secret: secret}}
}

// t21LB is a balancer builder named name declaring keys (all Secret or none).
type t21LB struct {
	extensiontest.LoadBalance
	t21Keys
}

func newT21LB(name string, secret bool, keys ...string) *t21LB {
	return &t21LB{LoadBalance: extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: name}}, t21Keys: t21Keys{keys: keys, secret: secret}}
}

const t21Origin = extension.Origin("t21")

// The bundled accesslog filter's key, a third party's key, a key ending
// in "."+key and a method-level form of a key are refused as secrets,
// naming the owner; nothing is marked or registered, in these catalogs
// or in others of the process that lack the owner.
func TestT21_F_AnotherExtensionsKeyDeclaredSecretIsRefused(t *testing.T) {
	c := bundled(t)
	if err := c.LoadBalance.Register(newT21LB("t21wlr", false, "t21wlr.t21choices", "t21wlr.span"), t21Origin); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"accesslog", []string{`filter: "t21evil" declares "accesslog" secret, a key of filter "accesslog" (bundled)`, `declare a key of its own (such as "t21evil.accesslog") secret instead`}},
		{"t21wlr.t21choices", []string{`filter: "t21evil" declares "t21wlr.t21choices" secret, a key of loadbalance "t21wlr" (t21)`}},
		{"t21choices", []string{`"t21evil" declares "t21choices" secret, which would hide "t21wlr.t21choices", a key of loadbalance "t21wlr" (t21)`, `hides every key ending in ".t21choices"`}},
		{"Echo.t21wlr.span", []string{`"Echo.t21wlr.span" secret, which would hide "t21wlr.span", a key of loadbalance "t21wlr" (t21)`, `method "Echo"`}},
		{"methods.Echo.accesslog", []string{`which would hide "accesslog", a key of filter "accesslog" (bundled)`}},
		// the kernel's keys, in those forms too
		{"Echo.timeout", []string{`"Echo.timeout" secret, which would hide the kernel's URL key "timeout"`, `method "Echo"`}},
		{"methods.Echo.timeout", []string{`which would hide the kernel's URL key "timeout"`}},
		{"interval", []string{`"interval" secret, which would hide the kernel's URL key "heartbeat.`}},
	} {
		for _, cat := range []*extension.Catalogs{c, extension.New()} {
			err := cat.Filter.Register(newT21Filter("t21evil", true, tc.key), t21Origin)
			if err == nil {
				t.Fatalf("Register of a filter declaring %q secret: no error", tc.key)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("secret %q: Register: %v\nwant %q", tc.key, err, w)
				}
			}
			if spi.IsSecretKey(tc.key) {
				t.Errorf("IsSecretKey(%q) = true after the refused Register", tc.key)
			}
			if _, err := cat.Filter.Get("t21evil"); err == nil {
				t.Fatalf("the refused filter is registered")
			}
		}
	}
	u := spi.MustParse("airnode://127.0.0.1:1/t.S?accesslog=true&t21wlr.t21choices=3&Echo.timeout=1s&heartbeat.interval=5s")
	if r := u.Redacted(); strings.Contains(r, "***") {
		t.Errorf("Redacted = %s; want every key shown", r)
	}
}

// The owner registered after an extension that declared its key Secret is
// refused (its value would be hidden), naming that extension; an owner
// declaring the key Secret too is accepted.
func TestT21_F_OwnerAfterTheSecretDeclarerIsRefused(t *testing.T) {
	c := extension.New()
	if err := c.Filter.Register(newT21Filter("t21first", true, "t21late.key"), t21Origin); err != nil {
		t.Fatal(err)
	}
	if !spi.IsSecretKey("t21late.key") {
		t.Fatal("t21late.key not marked secret")
	}
	for _, cat := range []*extension.Catalogs{c, bundled(t)} {
		err := cat.LoadBalance.Register(newT21LB("t21late", false, "t21late.key"), t21Origin)
		want := `loadbalance: "t21late" declares "t21late.key", which filter "t21first" (t21) declared secret`
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the later of the two is refused") {
			t.Fatalf("Register of the owner after the secret declarer: %v; want %q", err, want)
		}
		if _, err := cat.LoadBalance.Get("t21late"); err == nil {
			t.Fatal("the refused balancer is registered")
		}
		// a key the mark hides: "M.key" declared by another
		err = cat.LoadBalance.Register(newT21LB("t21late2", false, "x.t21late.key"), t21Origin)
		if err == nil || !strings.Contains(err.Error(), `which the key "t21late.key" declared secret by filter "t21first" (t21) hides`) {
			t.Errorf("Register of a key the mark hides: %v", err)
		}
	}
	// Secret in both: shared on purpose.
	if err := c.LoadBalance.Register(newT21LB("t21late", true, "t21late.key"), t21Origin); err != nil {
		t.Errorf("Register of the owner declaring the key Secret too: %v", err)
	}
}

// Keys shared on purpose without Secret stay allowed, with the kernel or
// another extension; the same extension registered in many catalogs (each
// command, each node) is one declaration, its Secret key included; a key
// of the extension's own namespace may be secret.
func TestT21_F_SharedKeysStayAllowed(t *testing.T) {
	for i := 0; i < 3; i++ {
		c := bundled(t)
		if err := c.Filter.Register(newT21Filter("t21a", false, "t21shared", "timeout", "weight", "accesslog"), t21Origin); err != nil {
			t.Fatalf("catalogs %d: a filter sharing keys without Secret: %v", i, err)
		}
		if err := c.LoadBalance.Register(newT21LB("t21b", false, "t21shared", "warmup"), t21Origin); err != nil {
			t.Fatalf("catalogs %d: a balancer sharing keys without Secret: %v", i, err)
		}
		if err := c.Cluster.Register(&struct {
			extensiontest.Cluster
			t21Keys
		}{extensiontest.Cluster{Ext: extensiontest.Ext{ExtName: "t21own"}}, t21Keys{keys: []string{"t21own.password", "t21own.timeout"}, secret: true}}, t21Origin); err != nil {
			t.Fatalf("catalogs %d: a cluster declaring keys of its own Secret: %v", i, err)
		}
	}
	if spi.IsSecretKey("t21shared") || spi.IsSecretKey("timeout") {
		t.Error("a key shared without Secret is marked secret")
	}
	if !spi.IsSecretKey("t21own.password") || !spi.IsSecretKey("t21own.timeout") {
		t.Error("keys of the extension's own declared Secret are not marked")
	}
	// Another extension of the same name on the same point from another
	// origin is another extension.
	c := extension.New()
	err := c.Filter.Register(newT21Filter("t21a", true, "t21shared"), extension.Origin("t21-other"))
	if err == nil || !strings.Contains(err.Error(), `a key of filter "t21a" (t21)`) && !strings.Contains(err.Error(), `a key of loadbalance "t21b" (t21)`) {
		t.Errorf("the same name from another origin declaring t21shared secret: %v", err)
	}
}

// A filter's activation key counts as a key it declares, without Secret.
func TestT21_F_ActivationKeyIsDeclared(t *testing.T) {
	c := extension.New()
	act := &extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "t21act", Act: spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: "t21act"}}}
	if err := c.Filter.Register(act, t21Origin); err != nil {
		t.Fatal(err)
	}
	err := c.Filter.Register(newT21Filter("t21evil2", true, "t21act"), t21Origin)
	if err == nil || !strings.Contains(err.Error(), `declares "t21act" secret, a key of filter "t21act" (t21)`) {
		t.Errorf("secret activation key of another filter: %v", err)
	}
	// its own activation key declared Secret in its Keys is its own
	f := newT21Filter("t21auth", true, "t21auth")
	f.Act = spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "t21auth"}
	if err := c.Filter.Register(f, t21Origin); err != nil {
		t.Errorf("a filter declaring its own activation key Secret: %v", err)
	}
}

package zookeeper_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// TestU8_DubboRegistryKeysNameTheirMapping (tester74 #8): the keys of a
// Dubbo ZooKeeper registry URL were refused with the list of known keys
// only; each now names what to write instead.
func TestU8_DubboRegistryKeysNameTheirMapping(t *testing.T) {
	for key, want := range map[string]string{
		"group=dubbo":       "use root= (group=dubbo is root=/dubbo",
		"timeout=5000":      "use connect.timeout=",
		"session=60000":     "use session.timeout=",
		"client=curator":    "not needed, this registry has one client",
		"sesion.timeout=1s": `did you mean "session.timeout"?`,
	} {
		_, err := zookeeper.Builder{}.Build(spi.MustParse("zookeeper://127.0.0.1:2181?" + key))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "unknown URL key") {
			t.Errorf("%s: %v, want an unknown key error saying %q", key, err, want)
		}
	}
}

// TestU8_EmptyRootHintNamesDubbosRoot (tester74 #8): with nothing under
// the registry's root and interfaces under /dubbo, the hint says so.
func TestU8_EmptyRootHintNamesDubbosRoot(t *testing.T) {
	d := build(t, server.URL("root=/dubbo"))
	for _, port := range []int{25901, 25902} {
		u := spi.MustParse("airnode://127.0.0.1:25901/u8.Svc" + string(rune('A'+port-25901)) + "?side=provider")
		if err := d.Register(ctx(t), u); err != nil {
			t.Fatal(err)
		}
	}
	a := build(t, server.URL("root=u8empty")).(*zookeeper.Registry)
	if _, err := a.Services(ctx(t)); err != nil {
		t.Fatal(err)
	}
	got := a.EmptyRootHint(ctx(t))
	if !strings.HasPrefix(got, "nothing under /u8empty; /dubbo holds ") || !strings.HasSuffix(got, "interfaces: add ?root=/dubbo") {
		t.Errorf("hint %q, want nothing under /u8empty; /dubbo holds N interfaces: add ?root=/dubbo", got)
	}
	// the /dubbo root's hint names airnode's default root, never its own
	// (tester90 #3b: symmetric)
	if got := d.(*zookeeper.Registry).EmptyRootHint(ctx(t)); got != "" && !strings.HasSuffix(got, ": drop ?root= (the default root is /airnode)") {
		t.Errorf("hint of the /dubbo root: %q, want none or one naming /airnode", got)
	}
}

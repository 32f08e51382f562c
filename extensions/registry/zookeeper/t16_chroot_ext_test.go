package zookeeper_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// TestT16_5_ChrootInURL (tester16 finding 5): the path of a registry URL
// is a ZooKeeper chroot, as in ZooKeeper's connect string "h:2181/chroot16"
// (Curator, Kafka): entries go under /chroot16/<root>/..., and registries
// with another chroot, or none, do not see them. It was silently ignored,
// so fleets meant to be separate saw each other. Dubbo's registry-service
// path is no chroot.
func TestT16_5_ChrootInURL(t *testing.T) {
	base := "zookeeper://" + server.Addr()
	p := build(t, base+"/chroot16?root=t16r")
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	if s := p.(interface{ String() string }).String(); s != base+"/chroot16/t16r" {
		t.Errorf("String() = %q, want %q", s, base+"/chroot16/t16r")
	}
	raw := rawClient(t)
	if ch, _, err := raw.Children("/chroot16/t16r/demo.Echo/providers"); err != nil || len(ch) != 1 || ch[0] != nodeName(provider(1, "")) {
		t.Fatalf("entries under /chroot16/t16r/demo.Echo/providers: %v, %v", ch, err)
	}
	if ok, _, err := raw.Exists("/t16r"); err != nil || ok {
		t.Fatalf("/t16r exists (%v, %v): the chroot was ignored", ok, err)
	}
	for _, tc := range []struct {
		url  string
		want int
	}{
		{base + "/chroot16?root=t16r", 1},
		{base + "/chroot16/?root=/t16r", 1},
		{base + "?root=t16r", 0},
		{base + "/other16?root=t16r", 0},
		{base + "/chroot16/t16r?root=", 1}, // root="" under a two-level chroot
		{base + "/org.apache.dubbo.registry.RegistryService?root=t16r", 0},
	} {
		got, err := build(t, tc.url).Lookup(ctx(t), consumer)
		if err != nil || len(got) != tc.want {
			t.Errorf("%s: Lookup = %v, %v; want %d providers", tc.url, got, err, tc.want)
		}
	}
	keys, err := build(t, base+"/chroot16?root=t16r").Services(ctx(t))
	if err != nil || len(keys) != 1 || keys[0] != "demo.Echo" {
		t.Errorf("Services under the chroot = %v, %v", keys, err)
	}

	// Dubbo's registry URLs carry its registry service as their path: that
	// is the tree Dubbo uses, with no chroot.
	d := build(t, base+"/org.apache.dubbo.registry.RegistryService?root=t16d")
	if err := d.Register(ctx(t), provider(2, "")); err != nil {
		t.Fatal(err)
	}
	if ch, _, err := raw.Children("/t16d/demo.Echo/providers"); err != nil || len(ch) != 1 {
		t.Fatalf("entries of a Dubbo registry URL under /t16d/demo.Echo/providers: %v, %v", ch, err)
	}
}

// TestT16_5_BadChroot: a chroot with an empty, "." or ".." node name is
// refused, naming it.
func TestT16_5_BadChroot(t *testing.T) {
	for _, bad := range []string{"zookeeper://h:2181/a//b", "zookeeper://h:2181/a/../b", "zookeeper://h:2181/./a"} {
		_, err := zookeeper.Builder{}.Build(spi.MustParse(bad))
		if err == nil || !strings.Contains(err.Error(), "zookeeper registry: chroot") {
			t.Errorf("Build(%q) = %v, want a chroot error", bad, err)
		}
	}
}

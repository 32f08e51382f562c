package pluginhost_test

import (
	"reflect"
	"testing"

	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/examples/staticregistry"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
)

// TestPluginKeysReachTheCatalog: the keys a plugin binary's builder
// declares (the staticregistry example's "interval") reach the host's
// catalog, so Describe (airnode list --keys) and the typo check see them
// as they see a bundled extension's; so do p2c's (its "weight").
func TestPluginKeysReachTheCatalog(t *testing.T) {
	_, c, err := startHost(t,
		config.Plugin{Name: "static", Point: "registry", Command: binary("staticregistry")},
		p2cSpec())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]extension.ExtensionInfo{}
	for _, p := range c.Describe() {
		for _, e := range p.Extensions {
			got[p.Name+"/"+e.Name] = e
		}
	}
	if s := got["registry/static"]; s.Origin != extension.Origin(binary("staticregistry")) || !reflect.DeepEqual(s.Keys, staticregistry.Builder{}.Keys()) {
		t.Fatalf("registry/static: %+v, want origin %s and keys %+v", s, binary("staticregistry"), staticregistry.Builder{}.Keys())
	}
	if p := got["loadbalance/"+p2cName]; p.Origin == "" || !reflect.DeepEqual(p.Keys, p2c.Builder{}.Keys()) {
		t.Fatalf("loadbalance/p2c: %+v, want registered with keys %+v", p, p2c.Builder{}.Keys())
	}
}

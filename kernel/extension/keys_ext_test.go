package extension_test

import (
	"reflect"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// keyedLB is a stand-in balancer that declares one key.
type keyedLB struct{ extensiontest.LoadBalance }

var p2cKeys = []spi.KeyDoc{{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers sampled per pick, 2..8"}}

func (keyedLB) Keys() []spi.KeyDoc { return p2cKeys }

// hiding wraps a balancer builder without forwarding Keys, as a decorator
// from Point.Wrap may.
type hiding struct{ spi.LoadBalanceBuilder }

// TestDescribeCarriesDeclaredKeys: Describe gives each extension the keys
// its builder declares (spi.KeyDescriber), a copy the caller may change,
// also behind a wrapper that does not forward them; nil for an extension
// that declares none.
func TestDescribeCarriesDeclaredKeys(t *testing.T) {
	c := extensiontest.Catalogs()
	if err := c.LoadBalance.Register(&keyedLB{extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.p2c"}}}, "/opt/p2c"); err != nil {
		t.Fatal(err)
	}
	c.LoadBalance.Wrap(func(b spi.LoadBalanceBuilder) spi.LoadBalanceBuilder { return hiding{b} })
	got := map[string][]spi.KeyDoc{}
	for _, p := range c.Describe() {
		if p.Name != extension.PointLoadBalance {
			continue
		}
		for _, e := range p.Extensions {
			got[e.Name] = e.Keys
		}
	}
	if !reflect.DeepEqual(got["acme.p2c"], p2cKeys) {
		t.Fatalf("acme.p2c keys %+v, want %+v", got["acme.p2c"], p2cKeys)
	}
	if k, ok := got["random"]; !ok || k != nil {
		t.Fatalf("random (declares none): keys %+v, listed %v; want nil", k, ok)
	}
	got["acme.p2c"][0].Key = "changed"
	if p2cKeys[0].Key != "p2c.choices" {
		t.Fatal("Describe returned the builder's own slice")
	}
}

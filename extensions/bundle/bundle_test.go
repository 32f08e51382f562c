package bundle_test

import (
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/extension"
)

func TestRegisterTwiceFails(t *testing.T) {
	c := bundle.Catalogs()
	if err := bundle.Register(c); err == nil {
		t.Fatal("registering the bundle twice succeeded")
	}
}

// TestDefaultsAreBundled checks that every point's default that has
// landed resolves.
func TestDefaultsAreBundled(t *testing.T) {
	c := bundle.Catalogs()
	for _, p := range []interface {
		Default() string
		Names() []string
		Name() string
	}{c.Transport, c.Registry, c.Heartbeat, c.LoadBalance, c.Codec, c.Cluster} {
		if _, ok := originOf(c, p.Name(), p.Default()); !ok {
			t.Errorf("%s: default %q not bundled (have %v)", p.Name(), p.Default(), p.Names())
		}
	}
}

func originOf(c *extension.Catalogs, point, name string) (extension.Origin, bool) {
	switch point {
	case extension.PointTransport:
		return c.Transport.Origin(name)
	case extension.PointRegistry:
		return c.Registry.Origin(name)
	case extension.PointLoadBalance:
		return c.LoadBalance.Origin(name)
	case extension.PointCodec:
		return c.Codec.Origin(name)
	case extension.PointCluster:
		return c.Cluster.Origin(name)
	case extension.PointHeartbeat:
		return c.Heartbeat.Origin(name)
	}
	return "", false
}

package pluginrpc_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/extensions/filter/token"
	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// p2c is a plugin balancer declaring keys of its own.
type p2c struct {
	random.Builder
	keys []spi.KeyDoc
}

func (p p2c) Name() string       { return "acme.p2c" }
func (p p2c) Keys() []spi.KeyDoc { return p.keys }

var p2cKeys = []spi.KeyDoc{
	{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers sampled per pick, 2..8"},
	{Key: "p2c.mode", Type: spi.KeyTypeEnum, Values: []string{"fast", "fair"}, Default: "fast", Doc: "how ties break"},
	{Key: "p2c.apikey", Type: spi.KeyTypeString, Secret: true, Doc: "a secret the balancer reads (crosses the protocol as secret, so the host redacts it)"},
}

// describe serves impl in process, as a started plugin, and returns what
// it describes for point.
func describe(t *testing.T, impl pluginrpc.Impl, point string) (pluginrpc.Description, error) {
	t.Helper()
	client, server := plugin.TestPluginGRPCConn(t, false, pluginrpc.ServerPlugins(impl)[pluginrpc.ProtocolVersion])
	t.Cleanup(func() { server.Stop(); _ = client.Close() })
	raw, err := client.Dispense(point)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return pluginrpc.Describe(ctx, raw.(*pluginrpc.Client), point)
}

// TestPluginDeclaresItsKeys: the keys a plugin's builder declares
// (spi.KeyDescriber) cross the plugin protocol in Describe, for balancers,
// registries and filters alike; the host-side builders report the keys
// they are given; a builder declaring none describes nil.
func TestPluginDeclaresItsKeys(t *testing.T) {
	d, err := describe(t, pluginrpc.Impl{LoadBalance: p2c{random.New(), p2cKeys}}, pluginrpc.PointLoadBalance)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "acme.p2c" || !reflect.DeepEqual(d.Keys, p2cKeys) {
		t.Fatalf("loadbalance: %q %+v, want acme.p2c %+v", d.Name, d.Keys, p2cKeys)
	}
	host := pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{Name: d.Name, Keys: d.Keys})
	if kd, ok := host.(spi.KeyDescriber); !ok || !reflect.DeepEqual(kd.Keys(), p2cKeys) {
		t.Fatalf("host balancer builder does not report the declared keys (%v)", ok)
	}

	d, err = describe(t, pluginrpc.Impl{Filter: token.Builder{}}, pluginrpc.PointFilter)
	if err != nil {
		t.Fatal(err)
	}
	if want := (token.Builder{}).Keys(); !reflect.DeepEqual(d.Keys, want) {
		t.Fatalf("filter: keys %+v, want %+v", d.Keys, want)
	}
	if kd := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: d.Name, Keys: d.Keys}).(spi.KeyDescriber); !reflect.DeepEqual(kd.Keys(), d.Keys) {
		t.Fatal("host filter builder does not report the declared keys")
	}

	d, err = describe(t, pluginrpc.Impl{Registry: memory.NewBuilder()}, pluginrpc.PointRegistry)
	if err != nil || d.Keys != nil {
		t.Fatalf("registry declaring none: keys %+v, err %v; want nil", d.Keys, err)
	}
	if kd := pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: d.Name}).(spi.KeyDescriber); kd.Keys() != nil {
		t.Fatal("host registry builder invents keys")
	}
}

// TestPluginBadKeyDeclarationsAreRefused: declarations spi.ValidateKeys
// refuses (a key twice, a default of the wrong type) fail Describe, so
// the plugin does not start, with an error naming the extension and the
// key.
func TestPluginBadKeyDeclarationsAreRefused(t *testing.T) {
	bad := append(p2cKeys[:1:1], spi.KeyDoc{Key: "p2c.choices", Type: spi.KeyTypeDuration, Default: "soon", Doc: "again"})
	_, err := describe(t, pluginrpc.Impl{LoadBalance: p2c{random.New(), bad}}, pluginrpc.PointLoadBalance)
	if err == nil || !strings.Contains(err.Error(), `loadbalance "acme.p2c" declares bad URL keys`) ||
		!strings.Contains(err.Error(), `"p2c.choices" declared twice`) || !strings.Contains(err.Error(), `default of key "p2c.choices"`) {
		t.Fatalf("Describe: %v", err)
	}
}

// tester nu77 #4: the host-side builders check the values a URL gives
// the keys the plugin declared (their type, an enum's values), at
// service level and method level, as a bundled extension's Build does:
// an *spi.ParamError naming the key as written, the value and what is
// allowed; the balancer's error names the plugin too (the kernel's
// extension.Build prefixes the others'). A valid value builds.
func TestHostBuildersCheckDeclaredKeyValues(t *testing.T) {
	lb := pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{Name: "acme.p2c", Keys: p2cKeys})
	f := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.p2c", Keys: p2cKeys})
	r := pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: "acme.p2c", Keys: p2cKeys})
	builds := map[string]func(spi.URL) error{
		"loadbalance": func(u spi.URL) error { _, err := lb.Build(u); return err },
		"filter":      func(u spi.URL) error { _, err := f.Build(u); return err },
		"registry":    func(u spi.URL) error { _, err := r.Build(u); return err },
	}
	for _, tc := range []struct{ query, want string }{
		{"p2c.mode=bogus", `invalid value "bogus" for URL key "p2c.mode": want one of fast, fair`},
		{"p2c.choices=two", `invalid value "two" for URL key "p2c.choices": want an integer`},
		{"methods.Echo.p2c.mode=slow", `invalid value "slow" for URL key "methods.Echo.p2c.mode": want one of fast, fair`},
		{"methods=Echo&Echo.p2c.mode=slow", `invalid value "slow" for URL key "Echo.p2c.mode": want one of fast, fair`},
	} {
		u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?" + tc.query)
		for point, build := range builds {
			err := build(u)
			var pe *spi.ParamError
			if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s Build(?%s) = %v, want a *spi.ParamError saying %s", point, tc.query, err, tc.want)
			}
			if point == "loadbalance" && err != nil && !strings.HasPrefix(err.Error(), `loadbalance "acme.p2c": `) {
				t.Errorf("balancer's error %q does not name the plugin", err)
			}
		}
	}
	ok := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?p2c.mode=fair&p2c.choices=3&methods.Echo.p2c.mode=fast&p2c.apikey=x")
	for point, build := range builds {
		if point == "loadbalance" {
			continue // builds in the plugin: no Source here
		}
		if err := build(ok); err != nil {
			t.Errorf("%s Build of valid values: %v", point, err)
		}
	}
}

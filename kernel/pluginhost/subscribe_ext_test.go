package pluginhost_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// tester73 #1: a registry plugin whose Subscribe fails (staticregistry
// with its file missing) fails the consumer's Subscribe at once with the
// plugin's error, as its Lookup does; the host returned a subscription
// before the plugin answered and dropped the error, so a Refer waited 10 s
// for "Subscribe of demo.Echo did not return within 10s; left running".
func TestRegistryPluginSubscribeErrorReachesTheCaller(t *testing.T) {
	_, c, err := startHost(t, config.Plugin{Name: "static", Point: "registry", Command: binary("staticregistry")})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := c.Registry.Get("static")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-providers.txt")
	reg := spi.MustParse("static://" + missing)
	r, err := rb.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	sub, err := r.Subscribe(ctx, spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), func([]spi.URL) {})
	took := time.Since(start)
	if sub != nil {
		sub.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "no-such-providers.txt") {
		t.Fatalf("Subscribe with the plugin's file missing: %v after %v; want the plugin's error naming the file", err, took)
	}
	if took > 5*time.Second {
		t.Fatalf("Subscribe failed after %v; want at once", took)
	}

	// and through a consumer node's Refer: the plugin's error, not "did
	// not return within 10s"
	n := kernel.NewNode(c, kernel.WithLogger(testLogger(t)), kernel.WithRegistry(reg))
	t.Cleanup(func() { _ = n.Close() })
	start = time.Now()
	_, err = n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), reg)
	took = time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "no-such-providers.txt") || strings.Contains(err.Error(), "did not return") {
		t.Fatalf("Refer with the plugin's Subscribe failing: %v after %v; want the plugin's error", err, took)
	}
	if took > 5*time.Second {
		t.Fatalf("Refer failed after %v; want at once", took)
	}
}

package pluginhost_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// nu48 F1, end to end: a provider whose filter plugin (a real moody
// process) refuses calls with spi.ErrAccessDenied as the Cause counts
// them as the bundled token filter's refusals are counted: no call or
// failure of the method in its metrics (it had BAD_REQUEST=4 there), and
// "denied by a filter plugin" in the rejected-before-the-service line;
// the consumer gets the plugin's status and message.
func TestPlug4ProviderFilterPluginDenialIsRejectedNotAFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, _ := moodyHost(t, "filter", map[string]string{"F_MODE": "deny"})
	p := kernel.NewNode(cat, kernel.WithLogger(testLogger(t)), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(testLogger(t)))
	t.Cleanup(func() { _ = c.Close() })
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	before := metrics.Access.PluginFilterRejections.Load()
	for range 3 {
		if _, err := ref.Invoke(ctx, "Echo", "x"); !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(err.Error(), "moody: denied") {
			t.Fatalf("call = %v; want BAD_REQUEST moody: denied", err)
		}
	}
	if n := metrics.Access.PluginFilterRejections.Load() - before; n != 3 {
		t.Errorf("plugin filter rejections +%d; want +3", n)
	}
	b, err := p.Catalogs().Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := metrics.RegistryOf(b)
	for _, r := range reg.Snapshot() {
		if r.Side == spi.Provider && r.Method == "Echo" && (r.Count != 0 || r.Failures != 0) {
			t.Errorf("provider row %+v: want no call and no failure of Echo (all three were refused)", r)
		}
	}
	var out strings.Builder
	if err := metrics.WriteRejected(&out, metrics.Counters()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "denied by a filter plugin ") {
		t.Errorf("WriteRejected = %q; want it to count the plugin's denials", out.String())
	}
}

// nu48 F2: a key a balancer plugin declares it reads from provider URLs
// (spi.KeyDoc.FromProviders: moody's "zone" with LB_KEYS=zone) is not
// warned of as having no effect when a provider publishes it; a key of a
// balancer read only from the consumer's reference (consistenthash's
// hash.nodes) still is.
func TestPlug4BalancerKeyReadFromProvidersIsNotWarnedOnExport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, _ := moodyHost(t, "loadbalance", map[string]string{"LB_KEYS": "zone"})
	var log logbuf.Buffer
	p := kernel.NewNode(cat, kernel.WithLogger(slog.New(slog.NewTextHandler(&log, nil))), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?zone=a&hash.nodes=10")); err != nil {
		t.Fatal(err)
	}
	out := log.String()
	if strings.Contains(out, "zone=a is published but has no effect") || strings.Contains(out, "key=zone") {
		t.Errorf("export warned of zone, which acme.moody reads from provider URLs:\n%s", out)
	}
	if !strings.Contains(out, "hash.nodes=10 is published but has no effect") {
		t.Errorf("export did not warn of hash.nodes (read from the consumer's reference only):\n%s", out)
	}
}

// nu48 F7: a host that logs at debug (airnode --log-level debug) starts
// its plugins with AIRNODE_PLUGIN_LOG=debug, so their debug records reach
// its log; one at info leaves the plugin at its default (info), and an
// AIRNODE_PLUGIN_LOG in the plugin's env wins over the host's level.
func TestPlug4HostDebugLevelReachesPlugins(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		env   map[string]string
		want  bool
	}{
		{slog.LevelDebug, nil, true},
		{slog.LevelInfo, nil, false},
		{slog.LevelDebug, map[string]string{"AIRNODE_PLUGIN_LOG": "info"}, false},
	} {
		var log logbuf.Buffer
		h := pluginhost.New([]config.Plugin{{Name: "acme.moody", Point: "filter", Command: moody(t), Env: tc.env}},
			pluginhost.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: tc.level}))))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := h.Start(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c := bundle.Catalogs()
		if err := h.Register(c); err != nil {
			t.Fatal(err)
		}
		fb, err := c.Filter.Get("acme.moody")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider")); err != nil {
			t.Fatal(err)
		}
		_ = h.Close() // the plugin's stderr is logged to the end
		if got := strings.Contains(log.String(), "moody: filter built"); got != tc.want {
			t.Errorf("host at %v, plugin env %v: plugin's debug record logged %v; want %v:\n%s", tc.level, tc.env, got, tc.want, log.String())
		}
	}
}

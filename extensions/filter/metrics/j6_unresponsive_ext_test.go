package metrics_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// tester71 #6: a plugin whose process runs but answers no liveness ping
// was airnode_plugin_up 1 and nothing else in /metrics. Now
// airnode_plugin_unresponsive{plugin} is 1 while it is, 0 otherwise and
// for every other plugin.
func TestPluginUnresponsiveSeries(t *testing.T) {
	h := metrics.NewHealth()
	h.SetState(metrics.NodeServing, "")
	var frozen atomic.Bool
	h.SetPlugins(func() []metrics.PluginUp {
		return []metrics.PluginUp{{Name: "greeter", Up: true, Unresponsive: frozen.Load()}, {Name: "tenant", Up: true}}
	})
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry(), metrics.WithHealth(h))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	expect := func(want ...string) {
		t.Helper()
		c, b := probe(t, srv, "/metrics")
		for _, w := range want {
			if c != http.StatusOK || !strings.Contains(b, w+"\n") {
				t.Fatalf("GET /metrics: %d, no line %q in:\n%s", c, w, b)
			}
		}
	}
	expect(`airnode_plugin_unresponsive{plugin="greeter"} 0`, `airnode_plugin_unresponsive{plugin="tenant"} 0`)
	frozen.Store(true)
	expect(`airnode_plugin_unresponsive{plugin="greeter"} 1`, `airnode_plugin_unresponsive{plugin="tenant"} 0`,
		`airnode_plugin_up{plugin="greeter"} 1`, "airnode_ready 1")
	frozen.Store(false)
	expect(`airnode_plugin_unresponsive{plugin="greeter"} 0`)
}

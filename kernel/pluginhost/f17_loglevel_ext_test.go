package pluginhost_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// tester F17: an AIRNODE_PLUGIN_LOG that is not a level, in a plugin's
// env in plugins.yaml or in the host's environment, was accepted without
// a word (the plugin silently logs at info). Start warns, naming the
// value, where it was set, the allowed levels and a close one; the
// environment's once for all the plugins that inherit it, none for a
// valid level.
func TestF17BadPluginLogLevelWarns(t *testing.T) {
	t.Setenv("AIRNODE_PLUGIN_LOG", "debugg")
	logs := new(logbuf.Buffer)
	h := pluginhost.New([]config.Plugin{
		{Name: "own", Point: pluginhost.PointService, Command: binary("greeter"), Env: map[string]string{"AIRNODE_PLUGIN_LOG": "verbos"}},
		{Name: "fine", Point: pluginhost.PointService, Command: binary("greeter"), Env: map[string]string{"AIRNODE_PLUGIN_LOG": "WARN"}},
		{Name: "inherits", Point: "loadbalance", Command: binary("p2c")},
		{Name: "inherits2", Point: "loadbalance", Command: binary("p2c")},
	}, pluginhost.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	var warnings []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "AIRNODE_PLUGIN_LOG is not a log level") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 2 {
		t.Fatalf("%d warnings about AIRNODE_PLUGIN_LOG, want 2 (the plugin's own, the environment's once):\n%s", len(warnings), text)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"plugin=own", "value=verbos", `from="its env in plugins.yaml"`, `value=debugg`, `from="the environment"`,
		`allowed="trace, debug, info, warn, error, off"`, `hint="did you mean debug?"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "plugin=fine") {
		t.Errorf("warned about a valid level:\n%s", joined)
	}
}

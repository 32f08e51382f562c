package pluginhost_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
)

// A plugin declared under another name than its extension gives itself
// (the p2c example, whose builder is "p2c", declared as acme.p2c next to
// the bundled p2c): the host says so once, when it first runs, naming
// both and which one is used; the catalog has it under the declared
// name, and PluginInfo.Provides carries the binary's own name. A plugin
// declared under its own name (the static registry as "static") logs
// nothing of the kind.
func TestDeclaredNameDiffersFromBinarysOwnName(t *testing.T) {
	var logs logbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h, c, err := startHostLogging(t, logger,
		config.Plugin{Name: "acme.p2c", Point: "loadbalance", Command: binary("p2c")},
		config.Plugin{Name: "static", Point: "registry", Command: binary("staticregistry")})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := c.LoadBalance.Origin("acme.p2c"); !ok || string(o) != binary("p2c") {
		t.Errorf("acme.p2c catalogued from %q (%v); want the plugin binary", o, ok)
	}
	if o, _ := c.LoadBalance.Origin("p2c"); string(o) == binary("p2c") {
		t.Errorf("the plugin took the bundled p2c's place")
	}
	if i := info(t, h, "acme.p2c"); len(i.Provides) != 1 || i.Provides[0] != "p2c" {
		t.Errorf("Provides = %v; want [p2c]", i.Provides)
	}
	l := logs.String()
	const want = `plugin's loadbalance calls itself \"p2c\" but is declared as \"acme.p2c\": the declared name is used (loadbalance=acme.p2c); \"p2c\" does not select it"`
	if strings.Count(l, want) != 1 || !strings.Contains(l, "plugin=acme.p2c point=loadbalance own_name=p2c") {
		t.Errorf("want one %s in the log:\n%s", want, l)
	}
	if strings.Contains(l, "calls itself \\\"static\\\"") {
		t.Errorf("a plugin declared under its own name was reported:\n%s", l)
	}
}

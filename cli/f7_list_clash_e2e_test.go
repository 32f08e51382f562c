package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester F7: `airnode list` ran the service plugins to check them and
// exited 0 for a plugins.yaml that serve refuses: two service plugins
// serving the same service, a plugin's demo.Echo beside the built-in one,
// an airnode.Health without a method Check. list now lists, then fails
// (exit 1) naming the plugins and what to change; a plugin's demo.Echo
// that a services entry assigns to it passes, as serve takes it.
func TestF7ListRefusesWhatServeRefuses(t *testing.T) {
	echo := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/echoplugin")
	dir := t.TempDir()
	list := func(yaml string) result {
		t.Helper()
		cfg := filepath.Join(dir, "plugins.yaml")
		if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return runCommand(t, 60*time.Second, nil, "list", "--config", cfg)
	}
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"two plugins, one service", "plugins:\n  - {name: g1, point: service, command: " + greeter + "}\n  - {name: g2, point: service, command: " + greeter + "}\n",
			[]string{`service greeter.Greeter is provided by two service plugins, "g1" and "g2"`}},
		{"a plugin's demo.Echo", "plugins:\n  - {name: ec, point: service, command: " + echo + "}\n",
			[]string{`service plugin "ec" provides demo.Echo, which serve exports built in too`}},
		{"airnode.Health without Check", "plugins:\n  - {name: hc, point: service, command: " + echo + ", env: {SERVICE_NAME: airnode.Health}}\n",
			[]string{`service plugin "hc" provides airnode.Health without a method Check (methods: Echo)`}},
	} {
		r := list(c.yaml)
		if r.code != 1 || !strings.Contains(r.stdout, "PLUGIN") {
			t.Errorf("%s: list exit %d, want 1 after the listing; stdout:\n%s\nstderr:\n%s", c.name, r.code, r.stdout, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: list's error lacks %q:\n%s", c.name, w, r.stderr)
			}
		}
	}
	r := list("plugins:\n  - {name: ec, point: service, command: " + echo + "}\nservices:\n  - {interface: demo.Echo}\n")
	if r.code != 0 {
		t.Errorf("list of a plugin's demo.Echo that services assigns to it: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

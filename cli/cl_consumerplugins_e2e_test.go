package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester fix-cl #1: a plugin balancer made every reference's default, by
// the file's consumer: section or by AIRNODE_CONSUMER_LOADBALANCE, is
// started by call, bench and registry ls (pluginsNamed), as one named by
// -p or a reference's params is; it failed them with `loadbalance
// "acme.p2c": ... is not running: this host did not start it`.
func TestConsumerDefaultPluginBalancerStarts(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	plugins := "plugins: [{name: acme.p2c, point: loadbalance, command: " + p2c + "}]\n"
	inFile := writeConfig(t, plugins+"consumer: {loadbalance: acme.p2c}\n")
	declared := writeConfig(t, plugins)
	p := startServe(t, "127.0.0.1:0", "memory://", nil, "")
	env := []string{"AIRNODE_CONSUMER_LOADBALANCE=acme.p2c"}
	for _, c := range []struct {
		name string
		cfg  string
		env  []string
	}{{"consumer section", inFile, nil}, {"environment", declared, env}} {
		r := runCommand(t, 30*time.Second, c.env, "call", "--config", c.cfg, p.url("demo.Echo"), "Echo", `"x"`)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"x"` || r.stderr != "" {
			t.Errorf("%s: call: exit %d, stdout %q, stderr %q; want 0 and \"x\"", c.name, r.code, r.stdout, r.stderr)
		}
		r = runCommand(t, 60*time.Second, c.env, "bench", "--config", c.cfg, "-n", "300", "-c", "4", p.url("demo.Echo"))
		if r.code != 0 || !strings.Contains(r.stdout, "errors      none") {
			t.Errorf("%s: bench: exit %d, stdout %q, stderr %q; want 0 and no errors", c.name, r.code, r.stdout, r.stderr)
		}
		r = runCommand(t, 30*time.Second, c.env, "registry", "--config", c.cfg, "ls", "--registry", "memory://")
		if r.code != 0 {
			t.Errorf("%s: registry ls: exit %d, stderr %q; want 0", c.name, r.code, r.stderr)
		}
	}
}

// tester fix-cl #1: a consumer default naming a plugin that fails to
// start fails call naming where the name came from: the variable that
// set it, not the file's consumer: section it did not come from.
func TestConsumerDefaultPluginFailureNamesItsSource(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-plugin")
	plugins := "plugins: [{name: acme.p2c, point: loadbalance, command: " + missing + "}]\n"
	declared := writeConfig(t, plugins)
	r := runCommand(t, 30*time.Second, []string{"AIRNODE_CONSUMER_LOADBALANCE=acme.p2c"}, "call", "--config", declared, "airnode://127.0.0.1:37212/demo.Echo", "Echo", `"x"`)
	if r.code != 1 || !strings.Contains(r.stderr, `airnode: call: config: environment AIRNODE_CONSUMER_LOADBALANCE: loadbalance "acme.p2c": pluginhost: plugin "acme.p2c" (`+missing+"): ") ||
		strings.Contains(r.stderr, `key "consumer"`) {
		t.Errorf("env: exit %d, stderr %q; want 1 naming AIRNODE_CONSUMER_LOADBALANCE and why the plugin did not start", r.code, r.stderr)
	}
	inFile := writeConfig(t, plugins+"consumer: {loadbalance: acme.p2c}\n")
	r = runCommand(t, 30*time.Second, nil, "call", "--config", inFile, "airnode://127.0.0.1:37212/demo.Echo", "Echo", `"x"`)
	if r.code != 1 || !strings.Contains(r.stderr, `airnode: call: config: `+inFile+`: key "consumer": loadbalance "acme.p2c": pluginhost: plugin "acme.p2c" (`+missing+"): ") {
		t.Errorf("file: exit %d, stderr %q; want 1 naming key \"consumer\" and why the plugin did not start", r.code, r.stderr)
	}
}

// tester fix-cl #2, #3: a misspelt plugin point gets a did-you-mean, as
// every other misspelt name does; a bare-number duration is refused
// naming the file read (bad8.yaml), not plugins.yaml.
func TestConfigPointTypoAndDurationName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	typo := write("bad2.yaml", "plugins: [{name: acme.x, point: servise, command: /bin/true}]\n")
	r := runCommand(t, 30*time.Second, nil, "list", "--config", typo)
	want := `airnode: list: config: ` + typo + `: key "plugins[0].point": "servise" cannot be served by a plugin (want one of filter, loadbalance, registry, service; transport, codec, heartbeat and cluster stay in process); did you mean "service"?` + "\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("point typo: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}

	bare := write("bad8.yaml", "consumer: {timeout: 500}\n")
	r = runCommand(t, 30*time.Second, nil, "list", "--config", bare)
	want = `airnode: list: config: ` + bare + `: key "consumer": invalid value "500" for URL key "timeout": want a duration with a unit, such as 60s, 1.5s or 200ms (a configuration file takes no bare number of milliseconds)` + "\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("bare duration: exit %d, stderr %q; want 1 and %q", r.code, r.stderr, want)
	}
}

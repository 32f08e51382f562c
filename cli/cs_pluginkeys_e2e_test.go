package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// tester96 #2: when two plugins fail to start, serve's error names each
// one's own key (it gave the first's to both lines), and a name declared
// under two points is told apart by its declaration (the failing filter
// plugins[1] was reported as plugins[0]).
func TestCS_ServeNamesEachFailedPluginsOwnKey(t *testing.T) {
	t.Parallel()
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	tenant := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.lb, point: loadbalance, command: "+tenant+"}\n  - {name: acme.auth, point: filter, command: "+p2c+"}\n")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:39402", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.lb"`)
	for _, re := range []string{
		`(?m)plugin "acme.lb" \(` + regexp.QuoteMeta(tenant) + `\): plugin does not provide point "loadbalance".*\(` + regexp.QuoteMeta(cfg) + `: key "plugins\[0\]\.point"\)$`,
		`(?m)^pluginhost: plugin "acme.auth" \(` + regexp.QuoteMeta(p2c) + `\): plugin does not provide point "filter".*\(` + regexp.QuoteMeta(cfg) + `: key "plugins\[1\]\.point"\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("stderr lacks %s:\n%s", re, r.stderr)
		}
	}
	fail := writeScript(t, t.TempDir(), "fail.sh", "echo cannot read secret >&2; exit 2\n")
	cfg = writeConfig(t, "plugins:\n  - {name: acme.x, point: loadbalance, command: "+p2c+"}\n  - {name: acme.x, point: filter, command: "+fail+"}\n")
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:39403", "--registry", "memory://")
	want := `airnode: serve: pluginhost: plugin "acme.x" (` + fail + `): exited with status 2 before the handshake; its last stderr line: "cannot read secret" (` + cfg + `: key "plugins[1].command")` + "\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) || strings.Contains(r.stderr, "plugins[0]") {
		t.Errorf("exit %d, stderr does not end %q:\n%s", r.code, want, r.stderr)
	}
}

// tester96 #3: call (and every consumer command that starts plugins)
// names the key of a plugin that failed to start as serve does: a
// sha256 mismatch is plugins[i].sha256. And a URL key that a filter
// plugin which failed to start may read (its keys are known only from
// the running plugin) is not called read by nothing.
func TestCS_ConsumerWarningsNameThePluginKey(t *testing.T) {
	t.Parallel()
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	fail := writeScript(t, t.TempDir(), "fail.sh", "echo cannot read secret >&2; exit 2\n")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+fail+"}\n"+
		"  - {name: acme.p2c, point: loadbalance, sha256: '"+strings.Repeat("0", 64)+"', command: "+p2c+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "acme.tenant=t1")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "call", "--config", cfg, p.url("demo.Echo")+"?loadbalance=acme.p2c", "Echo", `"x"`)
	if r.code != 1 ||
		!regexp.MustCompile(`warning: plugin failed to start; a command that selects it fails plugin=acme.p2c .*refusing to start it \(`+regexp.QuoteMeta(cfg)+`: key \\"plugins\[1\]\.sha256\\"\)"`).MatchString(r.stderr) ||
		!regexp.MustCompile(`warning: filter plugin failed to start; .*plugin=acme.auth .*exited with status 2.* \(`+regexp.QuoteMeta(cfg)+`: key \\"plugins\[0\]\.command\\"\)"`).MatchString(r.stderr) {
		t.Errorf("call selecting acme.p2c: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"call", "--config", cfg, p.url("demo.Echo") + "?acme.tenant=t2", "Echo", `"x"`},
		{"registry", "ls", "--config", cfg, "--registry", "memory://"},
	} {
		r := runCommand(t, 30*time.Second, noAirnodeEnv, args[0], args[1:]...)
		if r.code != 0 || !strings.Contains(r.stderr, `: key \"plugins[0].command\")"`) || strings.Contains(r.stderr, "is not read by airnode") {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// runBin runs the airnode binary in dir ("" the test's) and returns its exit
// code, stdout and stderr.
func runBin(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(hostEnviron(), "XDG_RUNTIME_DIR="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// One broken plugin entry fails only the commands that use it (tester9
// #3): call to a direct address, bench, list, list --keys, list --explain
// and registry ls run, and list shows it failed in its STATE column; a
// URL or registry that selects it fails with the plugin's reason. But
// list, having printed it all, exits 1 for the plugin declared under
// a point its binary does not provide, a mistake in the file like a
// shadowing name (cli4; TestListFailsForAPluginDeclaredUnderAnyWrongPoint),
// and so do list --keys and list --explain, with the same error.
// list starts every plugin but the service ones and warns of each that failed,
// naming it and why; call, bench and registry start only the filter
// plugins and those their command line, registry or references name, so
// they warn of the filter. Run with the real binary.
func TestBrokenPluginFailsOnlyTheCommandsThatUseIt(t *testing.T) {
	dir := t.TempDir()
	exit2 := writeScript(t, dir, "exit2.sh", "echo 'plugin: config missing, exiting' >&2\nexit 2\n")
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n"+
		"  - {name: acme.p2c, point: loadbalance, command: "+exit2+"}\n"+
		"  - {name: acme.reg, point: registry, command: "+exit2+"}\n"+
		"  - {name: notaplugin, point: loadbalance, command: /bin/true}\n"+
		"  - {name: missing, point: filter, command: /nonexistent/authz}\n"+
		"  - {name: wrongpoint, point: registry, command: "+p2c+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())
	const why = `exited with status 2 before the handshake; its last stderr line: \"plugin: config missing, exiting\"`
	for _, args := range [][]string{
		{"call", p.url("demo.Echo"), "Echo", `"x"`},
		{"bench", "-n", "20", "--warmup", "0", p.url("demo.Echo")},
		{"list"},
		{"list", "--keys"},
		{"list", "--explain", p.url("demo.Echo")},
		{"registry", "ls", "--registry", "memory://"},
	} {
		code, out, errOut := runBin(t, "", append([]string{"--config", cfg}, args...)...)
		all := args[0] == "list"
		wantCode := 0
		if all {
			wantCode = 1
			if !strings.Contains(errOut, `airnode: list: plugin "wrongpoint" is declared under point registry`) {
				t.Errorf("%v: stderr lacks the wrong point's error:\n%s", args, errOut)
			}
		}
		if code != wantCode || !strings.Contains(errOut, `consumer commands start every filter plugin) plugin=missing point=filter waited=`) ||
			strings.Contains(errOut, `plugin=acme.p2c`) != all || strings.Contains(errOut, why) != all ||
			strings.Contains(errOut, "plugin=notaplugin") != all || strings.Contains(errOut, "plugin=wrongpoint") != all {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
		if args[0] == "list" && len(args) == 1 {
			for _, want := range []string{
				`acme.p2c  ` + "  loadbalance  " + exit2,
				`failed: pluginhost: plugin "acme.p2c" (` + exit2 + `): exited with status 2 before the handshake; its last stderr line: "plugin: config missing, exiting"`,
				`failed: pluginhost: plugin "notaplugin" (/bin/true): exited with status 0 before the handshake, writing nothing on stdout or stderr; is it an airnode plugin (sdk.Serve)?`,
				`failed: pluginhost: plugin "missing" (/nonexistent/authz): `,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("list lacks %q:\n%s", want, out)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"call", p.url("demo.Echo") + "?loadbalance=acme.p2c", "Echo", `"x"`},
		{"list", "--explain", p.url("demo.Echo") + "?loadbalance=acme.p2c"},
		{"registry", "ls", "--registry", "acme.reg:///tmp"},
		{"call", "airnode:///demo.Echo", "--registry", "acme.reg:///tmp", "Echo", `"x"`},
	} {
		code, _, errOut := runBin(t, "", append([]string{"--config", cfg}, args...)...)
		if code != 1 || !strings.Contains(errOut, strings.ReplaceAll(why, `\"`, `"`)) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1 and the plugin's reason", args, code, errOut)
		}
	}
	// serve exports what its plugins provide: it does not run without one.
	code, _, errOut := runBin(t, "", "--config", cfg, "serve", "--listen", "127.0.0.1:0", "--registry", "memory://")
	if code != 1 || !strings.Contains(errOut, strings.ReplaceAll(why, `\"`, `"`)) {
		t.Errorf("serve: exit %d, stderr:\n%s", code, errOut)
	}
}

// Consumer commands (call, bench, registry) never start a service
// plugin, a provider's implementation (tester9 #3: a hung one added its
// start_timeout to every call); list runs it once, unsupervised, only to
// check that its binary provides point service (plug6), shows it "not
// started", says why it could not check a hung one, and exits 0 for it;
// serve does start it.
func TestConsumerCommandsStartNoServicePlugin(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	hung := writeScript(t, dir, "hung.sh", "echo $$ >> "+started+"\nexec sleep 30\n")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.svc, point: service, command: "+hung+", start_timeout: 1s}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, args := range [][]string{
		{"call", p.url("demo.Echo"), "Echo", `"x"`},
		{"bench", "-n", "20", "--warmup", "0", p.url("demo.Echo")},
		{"registry", "ls", "--registry", "memory://"},
	} {
		code, out, errOut := runBin(t, "", append([]string{"--config", cfg}, args...)...)
		if code != 0 || errOut != "" && args[0] != "bench" {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
	if b, err := os.ReadFile(started); err == nil {
		t.Fatalf("a consumer command started the service plugin (PIDs %q)", b)
	}
	code, out, errOut := runBin(t, "", "--config", cfg, "list")
	if code != 0 || !row("acme.svc", "service", hung, "-", "-",
		"not started: list started it once to check its point, and it failed to start: no handshake within start_timeout 1s; serve, which runs it, fails to start with it").MatchString(out) {
		t.Errorf("list: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// One warning line says so, as for a plugin that failed to start.
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `airnode: list: warning: service plugin failed to start, so list could not check its point; serve, which runs it, fails to start with it plugin=acme.svc point=service err="pluginhost: plugin \"acme.svc\" (`+hung+`): no handshake within start_timeout 1s`) {
		t.Errorf("list: stderr %q; want one warning naming acme.svc and why", errOut)
	}
	if b, err := os.ReadFile(started); err != nil || strings.Count(string(b), "\n") != 1 {
		t.Errorf("list ran the service plugin %q times (%v); want once, to check its point", b, err)
	}
	code, _, errOut = runBin(t, "", "--config", cfg, "serve", "--listen", "127.0.0.1:0", "--registry", "memory://")
	if code != 1 || !strings.Contains(errOut, `plugin "acme.svc"`) || !strings.Contains(errOut, "no handshake within start_timeout 1s") {
		t.Errorf("serve: exit %d, stderr:\n%s", code, errOut)
	}
	if b, err := os.ReadFile(started); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Errorf("serve did not start the service plugin: %q, %v", b, err)
	}
}

// A plugin declaring a kernel key with another type than the kernel's,
// or a key that selects an extension, gets at start the warning that
// `airnode plugin check` fails it with (tester9 #8); it still runs.
func TestHostWarnsOfKernelKeyClashesAtStart(t *testing.T) {
	lb := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/keyslb")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.keys, point: loadbalance, command: "+lb+
		", args: [\"timeout:int:5\", \"loadbalance:string:x\", \"keyslb.window:duration:1s\"]}\n")
	code, out, errOut := runBin(t, "", "--config", cfg, "list")
	for _, want := range []string{
		`loadbalance \"keyslb\" declares URL key \"timeout\" as int, but the kernel reads \"timeout\" itself (type duration`,
		`loadbalance \"keyslb\" declares URL key \"loadbalance\", which the kernel reads to choose the loadbalance extension`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("list's stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 0 || strings.Contains(errOut, "keyslb.window") || !row("acme.keys", "loadbalance", lb, "1", "keyslb", "(differs:", "URLs", "use", "acme.keys)", "running").MatchString(out) {
		t.Errorf("list: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A relative command resolves from the working directory (config.Plugin);
// when the configuration file is elsewhere and the path exists next to
// it — instead of, or as well as, in the working directory — a warning
// names both (tester9 #10). The resolution does not change.
func TestRelativeCommandWarnsWhenTheConfigDirResolvesOtherwise(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	p2cBytes, err := os.ReadFile(p2c)
	if err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	rel := filepath.Join(wd, "rel")
	for _, d := range []string{filepath.Join(rel, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(rel, "bin", "plug"), p2cBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rel, "plugins.yaml"), []byte("plugins:\n  - {name: acme.p2c, point: loadbalance, command: ./bin/plug}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBin(t, wd, "--config", "rel/plugins.yaml", "list")
	if code != 0 || !strings.Contains(errOut, "resolved from the working directory, where it does not exist") ||
		!strings.Contains(errOut, "resolved="+filepath.Join(wd, "bin", "plug")) || !strings.Contains(errOut, "next_to_config="+filepath.Join(rel, "bin", "plug")) {
		t.Errorf("only next to the config: exit %d\n%s\n%s", code, out, errOut)
	}

	// Both exist: the working directory's is used, and the warning says so.
	if err := os.MkdirAll(filepath.Join(wd, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "bin", "plug"), p2cBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runBin(t, wd, "--config", "rel/plugins.yaml", "list")
	if code != 0 || !strings.Contains(errOut, "another file of that path exists next to the configuration file and is not used") ||
		!row("acme.p2c", "loadbalance", filepath.Join(wd, "bin", "plug"), "1", "p2c", "(differs:", "URLs", "use", "acme.p2c)", "running").MatchString(out) {
		t.Errorf("both: exit %d\n%s\n%s", code, out, errOut)
	}
	// From the config's own directory: nothing to warn about.
	if code, _, errOut := runBin(t, rel, "--config", "plugins.yaml", "list"); code != 0 || strings.Contains(errOut, "relative path") {
		t.Errorf("from the config's directory: exit %d\n%s", code, errOut)
	}
}

// call and bench start only the plugins their SERVICE_URL or -p values
// name (and the filter plugins), registry only those its registry URL
// names, list all but the service ones: a one-shot call does not pay for
// launching plugins it does not use.
func TestConsumerCommandsStartOnlyThePluginsTheyName(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	static := buildPlugin(t, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry")
	lb := writeScript(t, dir, "lb.sh", "echo lb >> "+started+"\nexec "+p2c+"\n")
	reg := writeScript(t, dir, "reg.sh", "echo reg >> "+started+"\nexec "+static+"\n")
	providers := filepath.Join(dir, "providers.txt")
	p := serve(t, "127.0.0.1:0", t.TempDir())
	if err := os.WriteFile(providers, []byte(p.url("demo.Echo")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "plugins:\n  - {name: acme.lb, point: loadbalance, command: "+lb+"}\n  - {name: acme.reg, point: registry, command: "+reg+"}\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"call", p.url("demo.Echo"), "Echo", `"x"`}, ""},
		{[]string{"bench", "-n", "20", "--warmup", "0", p.url("demo.Echo")}, ""},
		{[]string{"call", p.url("demo.Echo") + "?loadbalance=acme.lb", "Echo", `"x"`}, "lb\n"},
		{[]string{"call", "-p", "methods.Echo.loadbalance=acme.lb", p.url("demo.Echo"), "Echo", `"x"`}, "lb\n"},
		{[]string{"call", "--registry", "acme.reg://" + providers, "demo.Echo", "Echo", `"x"`}, "reg\n"},
		{[]string{"registry", "ls", "--registry", "acme.reg://" + providers}, "reg\n"},
		{[]string{"registry", "ls", "--registry", "memory://"}, ""},
		{[]string{"list"}, "lb\nreg\n"},
	} {
		_ = os.Remove(started)
		code, out, errOut := runBin(t, "", append([]string{"--config", cfg}, tt.args...)...)
		b, _ := os.ReadFile(started)
		got := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(got)
		if code != 0 || strings.Join(got, "\n") != strings.TrimSpace(tt.want) {
			t.Errorf("%v: exit %d, started %q, want %q\nstdout:\n%s\nstderr:\n%s", tt.args, code, b, tt.want, out, errOut)
		}
	}
}

// pluginsNamed accepts the filter plugins and the plugins a word of the
// command line, the registry URL, the configuration's registry or its
// references names, and no other.
func TestPluginsNamed(t *testing.T) {
	cfg := config.Config{
		Registry:   "acme.zk://127.0.0.1:2181",
		References: []config.Reference{{Interface: "demo.Echo", Params: map[string]string{"methods.Echo.loadbalance": "acme.ref"}}},
	}
	use := pluginsNamed(cfg, "acme.reg:///tmp/providers", "airnode://127.0.0.1:1/demo.Echo?loadbalance=acme.p2c&timeout=1s", "methods.Sleep.loadbalance=acme.m", "filter=-x,acme.f2")
	for name, want := range map[string]bool{
		"acme.p2c": true, "acme.m": true, "acme.reg": true, "acme.zk": true, "acme.ref": true,
		"acme.p2": false, "p2c": false, "acme.other": false, "acme": false,
	} {
		if got := use(config.Plugin{Name: name, Point: "loadbalance"}); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if !use(config.Plugin{Name: "acme.unnamed", Point: "filter"}) {
		t.Error("a filter plugin is not started")
	}
}

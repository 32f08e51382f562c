package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// writeConfig writes a plugins.yaml with the given body into a new
// directory and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A plugin whose name shadows a bundled extension is a configuration
// error: it fails list and registry (exit 1). A plugin that merely fails
// to start fails only the commands that use it
// (TestBrokenPluginFailsOnlyTheCommandsThatUseIt).
func TestPluginShadowingABundledNameFailsListAndRegistry(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n  - {name: random, point: loadbalance, command: "+p2c+"}\n")
	const want = `may not shadow the bundled loadbalance "random"`
	for _, args := range [][]string{
		{"--config", cfg, "list"},
		{"--config", cfg, "list", "--explain", "airnode://h:20880/demo.Echo"},
		{"--config", cfg, "registry", "ls", "--registry", "memory://"},
	} {
		code, _, errOut := airnode(t, nil, args...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, code, errOut, want)
		}
	}
}

// registry ls and watch start the configuration's plugins, so a registry
// plugin's scheme works there as it does for call and bench.
func TestRegistryLsUsesRegistryPlugin(t *testing.T) {
	static := buildPlugin(t, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry")
	providers := filepath.Join(t.TempDir(), "providers.txt")
	if err := os.WriteFile(providers, []byte("airnode://127.0.0.1:20001/demo.Echo?weight=200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "plugins:\n  - {name: static, point: registry, command: "+static+"}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "registry", "ls", "--registry", "static://"+providers, "demo.Echo")
	if code != 0 || !row("127.0.0.1:20001", "200", "-", "-", "airnode").MatchString(out) {
		t.Fatalf("registry ls: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// A SIGTERM to serve's whole process group (a shell's kill -- -PGID)
// does not restart its plugins: they run in process groups of their own
// (pluginhost), keep serving until serve closes them, and the host does
// not log or perform a restart while it shuts down.
func TestServeGroupSIGTERMDoesNotRestartPlugins(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.p2c, point: loadbalance, command: "+p2c+", restart: always}\n") // p2c is bundled
	var log logbuf.Buffer
	cmd := exec.Command(binary, "--config", cfg, "serve", "--listen", "127.0.0.1:0", "--registry", "memory://", "--shutdown-wait", "500ms")
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), "airnode serve: serving") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("serve did not start:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("serve did not exit after SIGTERM:\n%s", log.String())
	}
	if out := log.String(); strings.Contains(out, "restarting") || strings.Contains(out, "plugin exited") {
		t.Errorf("plugin restarted during shutdown:\n%s", out)
	}
}

// The configuration's reference of an interface gives list --explain its
// defaults (the URL's own keys win), and a misspelled extension name in it
// fails every command that loads the catalogs, with a did-you-mean.
func TestReferencesApplyAndValidate(t *testing.T) {
	cfg := writeConfig(t, "references:\n  - {interface: demo.Echo, params: {loadbalance: roundrobin, timeout: 200ms}}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "airnode://h:20880/demo.Echo")
	if code != 0 || !row("loadbalance", "service", "roundrobin", "bundled", "service-level key loadbalance=roundrobin, from the config's reference").MatchString(out) ||
		!row("timeout", "service", "200ms", "reference (timeout)").MatchString(out) {
		t.Errorf("explain with a reference: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "airnode://h:20880/demo.Echo?timeout=3s")
	if code != 0 || !row("timeout", "service", "3s", "SERVICE_URL query (timeout)").MatchString(out) {
		t.Errorf("URL key should win over the reference: exit %d %s\n%s", code, errOut, out)
	}

	bad := writeConfig(t, "references:\n  - {interface: demo.Echo, params: {loadbalance: rundrobin, timeout: 200ms}}\n")
	for _, args := range [][]string{{"list"}, {"registry", "ls", "--registry", "memory://"}} {
		code, _, errOut := airnode(t, nil, append([]string{"--config", bad}, args...)...)
		if code != 1 || !strings.Contains(errOut, "config: "+bad+`: key "references[0].params": unknown loadbalance "rundrobin"`) || !strings.Contains(errOut, `did you mean "roundrobin"?`) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// A bad value in the configuration file — a dispatcher or transport in
// protocol or a service's params, an extension in a reference — fails
// serve at startup with an error naming the file and the key, in the form
// config.Load uses for the values it checks itself; a -p value that
// overrides the file's is not blamed on the file.
func TestConfigFileErrorsNameFileAndKey(t *testing.T) {
	for _, tc := range []struct{ body, key, want string }{
		{"protocol: {dispatcher: dirct}\n", "protocol", `invalid value "dirct" for URL key "dispatcher": want one of adaptive, all, direct (did you mean "direct"?)`},
		{"services:\n  - {interface: demo.Echo, params: {dispatcher: bogus}}\n", "services[0].params", `invalid value "bogus" for URL key "dispatcher"`},
		{"protocol: {transport: tpc}\n", "protocol", `unknown transport "tpc" (available: smux, tcp); did you mean "tcp"?`},
		{"references:\n  - {interface: demo.Echo, params: {cluster: failovr}}\n", "references[0].params", `unknown cluster "failovr"`},
	} {
		cfg := writeConfig(t, tc.body)
		out := serveFails(t, "--config", cfg)
		if want := "airnode: serve: config: " + cfg + ": key \"" + tc.key + "\": " + tc.want; !strings.Contains(out, want) {
			t.Errorf("config %q: serve printed\n%s\nwant %s", tc.body, out, want)
		}
	}
	cfg := writeConfig(t, "protocol: {dispatcher: dirct}\n")
	if out := serveFails(t, "--config", cfg, "-p", "dispatcher=bad"); strings.Contains(out, cfg) || !strings.Contains(out, `invalid value "bad" for URL key "dispatcher"`) {
		t.Errorf("-p dispatcher=bad over the file's: %s", out)
	}
}

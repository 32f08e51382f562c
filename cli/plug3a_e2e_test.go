package cli

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/sdk/pluginrpc"
)

// plug3aPlugin builds the plug3a test filter plugin (kernel/pluginhost's
// testdata: a provider filter that passes calls on, and panics before
// sdk.Serve when PLUG3A_PANIC=1).
func plug3aPlugin(t *testing.T) string {
	t.Helper()
	return buildPlugin(t, "github.com/airnode/airnode/kernel/pluginhost/testdata/plug3a")
}

// A provider filter plugin gone for good (restart: never, killed): every
// call through the provider's chain would fail (the filter fails
// closed), so the services whose chain holds it leave the registry, as a
// service plugin's do, and /ready answers 503 naming the plugin; the
// consumers go elsewhere (it stayed registered, failing every call).
func TestPlug3aFilterPluginGoneForGoodLeavesTheRegistry(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, restart: never, command: "+plug3aPlugin(t)+"}\n")
	regDir := filepath.Join(t.TempDir(), "reg")
	p := serve(t, "127.0.0.1:0", regDir, "--config", cfg, "--metrics", "127.0.0.1:0")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
	if n := len(providerEntries(t, regDir, "demo.Echo")); n != 1 {
		t.Fatalf("demo.Echo has %d provider entries, want 1", n)
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "acme.plug3a" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	pid, _ := strconv.Atoi(m[2])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	deadline := killed.Add(3 * time.Second)
	for len(providerEntries(t, regDir, "demo.Echo")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("demo.Echo still registered 3s after its filter plugin died for good")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("demo.Echo left the registry %v after kill -9 of its filter plugin", time.Since(killed).Round(time.Millisecond))
	body := waitProbe(t, addr, "/ready", http.StatusServiceUnavailable, `"acme.plug3a"`, time.Second)
	t.Logf("/ready: %q", body)
	if !strings.Contains(p.logText(), "filter plugin is down for good") {
		t.Fatalf("serve did not say why it unregistered demo.Echo:\n%s", p.logText())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

// `list` shows a filter plugin that failed to start as such, with why,
// instead of an activation it cannot know ("only when listed in
// filter=, order 0").
func TestPlug3aListSaysAFilterPluginFailedToStart(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, command: "+plug3aPlugin(t)+", env: {PLUG3A_PANIC: \"1\"}}\n")
	r := runCommand(t, 30*time.Second, nil, "--config", cfg, "list")
	var row string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "acme.plug3a") {
			row = l
			break
		}
	}
	t.Log(row)
	if !strings.Contains(row, `activation unknown: the plugin failed to start: exited with status 2 before the handshake: it panicked: "panic: assignment to entry in nil map"`) ||
		strings.Contains(row, "order 0") {
		t.Fatalf("list's row of the failed filter plugin: %q\n%s", row, r.stdout)
	}
}

// A plugin named like a bundled extension is a configuration error that
// names the file and the key, like the others, before any plugin starts.
func TestPlug3aShadowingPluginNameIsAConfigError(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, command: /bin/true}\n  - {name: random, point: loadbalance, command: /bin/true}\n")
	r := runCommand(t, 30*time.Second, nil, "--config", cfg, "serve", "--listen", "127.0.0.1:0")
	want := `config: ` + cfg + `: key "plugins[1].name": plugin "random" may not shadow the bundled loadbalance "random": rename the plugin (say "acme.random"`
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	if strings.Contains(r.stderr, "before the handshake") {
		t.Fatalf("plugins were started before the name was refused: %q", r.stderr)
	}
}

// `airnode version` prints the plugin protocol version the host speaks.
func TestPlug3aVersionShowsThePluginProtocol(t *testing.T) {
	code, out, _ := runCLI(t, []string{"version"})
	if want := "plugin protocol version " + strconv.Itoa(pluginrpc.ProtocolVersion) + "\n"; code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("version: exit %d, %q; want it to end with %q", code, out, want)
	}
}

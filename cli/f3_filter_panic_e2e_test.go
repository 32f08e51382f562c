package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tester F3: a consumer-side filter plugin's panic printed its whole
// goroutine stack, escaped into one log line of some kilobytes, on
// `airnode call`'s stderr. At call's default level it is one line (where
// and the panic's value) before the CLIENT_ERROR; --log-level debug shows
// the stack too.
func TestF3ConsumerFilterPanicIsOneLineStackAtDebug(t *testing.T) {
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", filepath.Join(dir, "reg"))
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: nu.guard, point: filter, command: " + moody + ", env: {F_MODE: panic}}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := call(t, nil, "--config", cfg, p.url("demo.Echo"), "Echo", `"panic"`)
	if r.code == 0 || !strings.Contains(r.stderr, `CLIENT_ERROR: panic in filter plugin "nu.guard"`) {
		t.Fatalf("call through a panicking filter plugin: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "panic in plugin code") || !strings.Contains(r.stderr, "moody: asked to panic") {
		t.Fatalf("call's stderr does not say the plugin panicked:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "debug.Stack") || len(r.stderr) > 1000 {
		t.Fatalf("call's stderr (%d bytes) has the panic's stack at the default level:\n%s", len(r.stderr), r.stderr)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; n != 2 {
		t.Fatalf("call's stderr has %d lines, want 2 (the plugin's panic, the CLIENT_ERROR):\n%s", n, r.stderr)
	}
	r = call(t, nil, "--log-level", "debug", "--config", cfg, p.url("demo.Echo"), "Echo", `"panic"`)
	if !strings.Contains(r.stderr, "stack of the panic in plugin code") || !strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("call --log-level debug does not show the panic's stack:\n%s", r.stderr)
	}
}

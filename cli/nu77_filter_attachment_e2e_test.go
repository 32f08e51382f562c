package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nu77 #1: a provider filter plugin that only adds a response attachment
// (moody, F_MODE=stamp) leaves the method's result as the method gave it:
// `airnode call ... Echo 12345678901234567` prints that number (it came
// back rounded through the plugin's JSON, 12345678901234568) and shows
// the attachment, and bench's []byte answers keep their size (they came
// back as base64 strings: "BAD_RESPONSE: bench: Echo returned 136 bytes,
// want 100" on every call).
func TestProviderFilterPluginAddingAnAttachmentKeepsTheResult(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.stamp, point: filter, command: "+moody+", env: {F_MODE: stamp}}\n")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir(), "--config", cfg)
	r := call(t, noAirnodeEnv, "--show-attachments", p.url("demo.Echo"), "Echo", "12345678901234567")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "12345678901234567" || !strings.Contains(r.stderr, "attachment x-stamped=moody") {
		t.Fatalf("call: exit %d, stdout %q, stderr %q; want 12345678901234567 and the attachment x-stamped=moody", r.code, r.stdout, r.stderr)
	}
	b := runCommand(t, 60*time.Second, noAirnodeEnv, "bench", "-n", "50", "--warmup", "0", p.url("demo.Echo"))
	if b.code != 0 || strings.Contains(b.stdout+b.stderr, "BAD_RESPONSE") || strings.Contains(b.stdout, "FAILED") {
		t.Fatalf("bench through the filter: exit %d\nstdout:\n%s\nstderr:\n%s", b.code, b.stdout, b.stderr)
	}
}

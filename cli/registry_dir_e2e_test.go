package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tester finding (item 10): the default file registry's directory was
// never shown (`registry ls` printed "no services in file://", serve
// logged registry=file://), and XDG_RUNTIME_DIR=/nonexistent/dir made it
// create /nonexistent/dir/airnode/registry. serve's log line, registry ls
// and call's errors now name the directory, and a runtime directory that
// does not exist falls back like an unset one.
func TestDefaultFileRegistryDirIsShown(t *testing.T) {
	t.Parallel()
	runtime := t.TempDir()
	dir := filepath.Join(runtime, "airnode", "registry")
	env := append([]string{"XDG_RUNTIME_DIR=" + runtime}, noAirnodeEnv...)

	r := runCommand(t, 20*time.Second, env, "registry", "ls")
	if want := "no services in file:// (" + dir + ")\n"; r.code != 0 || r.stdout != want {
		t.Errorf("registry ls: exit %d, stdout %q, want %q; stderr %s", r.code, r.stdout, want, r.stderr)
	}
	p := startServe(t, "127.0.0.1:0", "", env, t.TempDir(), "--shutdown-wait", "0s")
	if want := `registry="file:// (` + dir + `)"`; !strings.Contains(p.logText(), want) {
		t.Errorf("serve's serving line lacks %s:\n%s", want, p.logText())
	}
	r = call(t, env, "demo.Nope", "Echo", "1")
	if want := "(registry: file:// (" + dir + "))"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("call of a missing service: exit %d, stderr %q, want it to contain %q", r.code, r.stderr, want)
	}

	missing := filepath.Join(t.TempDir(), "nonexistent")
	cache := t.TempDir()
	env = append([]string{"XDG_RUNTIME_DIR=" + filepath.Join(missing, "dir"), "XDG_CACHE_HOME=" + cache}, noAirnodeEnv...)
	p = startServe(t, "127.0.0.1:0", "", env, t.TempDir(), "--shutdown-wait", "0s")
	fallback := filepath.Join(cache, "airnode", "registry")
	if want := `registry="file:// (` + fallback + `)"`; !strings.Contains(p.logText(), want) {
		t.Errorf("with XDG_RUNTIME_DIR missing, serve's serving line lacks %s:\n%s", want, p.logText())
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("serve created %s (stat: %v); want the fallback %s used", missing, err, fallback)
	}
	if r := call(t, env, "demo.Echo", "Echo", `"fallback"`); r.code != 0 || strings.TrimSpace(r.stdout) != `"fallback"` {
		t.Errorf("call through the fallback directory: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

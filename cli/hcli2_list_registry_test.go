package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// `airnode list --explain SERVICE_KEY --registry URL` asks that registry
// for the providers, as call and bench do with --registry: the flag beats
// AIRNODE_REGISTRY, and AIRNODE_REGISTRY alone still works. Through the
// real binary, against a real `airnode serve` registered in a file
// registry. Before, list refused the flag ("unknown flag: --registry").
func TestHCLI2_ListExplainRegistryFlag(t *testing.T) {
	regDir, emptyDir := t.TempDir(), t.TempDir()
	p := serve(t, "127.0.0.1:0", regDir)
	reg := "file://" + regDir
	want := "providers  1 in " + reg + ": " + p.addr
	env := func(extra ...string) []string {
		var e []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AIRNODE_") {
				e = append(e, kv)
			}
		}
		return append(e, append([]string{"XDG_RUNTIME_DIR=" + emptyDir}, extra...)...)
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", env(), []string{"--registry", reg}},
		{"flag beats AIRNODE_REGISTRY", env("AIRNODE_REGISTRY=file://" + emptyDir), []string{"--registry", reg}},
		{"AIRNODE_REGISTRY", env("AIRNODE_REGISTRY=" + reg), nil},
	} {
		cmd := exec.Command(binary, append([]string{"list", "--explain", "demo.Echo"}, c.args...)...)
		cmd.Env, cmd.Dir = c.env, emptyDir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "scheme of the configured registry "+reg) {
			t.Errorf("%s: %v; want a line %q and the registry row naming %s:\n%s", c.name, err, want, reg, out)
		}
	}
	// the flag in list's help, with the same meaning as call's
	out, err := exec.Command(binary, "list", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--registry string") {
		t.Errorf("list --help: %v; no --registry flag:\n%s", err, out)
	}
}

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/pluginhost"
)

// buildPlugin builds an example plugin into a temp dir.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestPluginCheckRunsConformance(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(binary, "plugin", "check", p2c)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("plugin check: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"binary    " + p2c, "protocol  1", "provides  loadbalance  p2c",
		"--- PASS: Conformance/loadbalance ", "result       ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	stdout.Reset()
	stderr.Reset()
	cmd = exec.Command(binary, "plugin", "check", p2c, "--sha256", strings.Repeat("0", 64))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "expected "+strings.Repeat("0", 64)+", actual ") {
		t.Fatalf("wrong sha256: %v\n%s", err, stderr.String())
	}
}

func TestPrintPlugins(t *testing.T) {
	var b bytes.Buffer
	printPlugins(&b, []pluginhost.PluginInfo{
		{Name: "p2c", Point: "loadbalance", Path: "/opt/p2c", ProtocolVersion: 1, Provides: []string{"p2c"}, State: pluginhost.StateRunning},
		{Name: "bad", Point: "loadbalance", Path: "/opt/bad", State: pluginhost.StateFailed, Reason: "sha256 mismatch"},
	})
	out := b.String()
	for _, want := range []string{"PLUGIN", "/opt/p2c", "running", "failed: sha256 mismatch"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

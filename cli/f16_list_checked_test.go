package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `airnode list` runs a service plugin once to check its point (tester61
// #1): its PLUGINS row, text and --json, shows what that run learned, the
// negotiated protocol and the services in NAME IN BINARY, and a STATE that
// says it was started once and stopped, not "not started". A wrapper
// script around the real greeter binary counts the starts: one per list.
func TestListShowsWhatItsCheckOfAServicePluginLearned(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts.log")
	wrap := filepath.Join(dir, "wrap.sh")
	script := fmt.Sprintf("#!/bin/sh\necho started >> %s\nexec %s \"$@\"\n", starts, greeter)
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "plugins:\n  - {name: greeter, point: service, command: "+wrap+"}\n")
	count := func() int {
		b, err := os.ReadFile(starts)
		if err != nil {
			t.Fatalf("the wrapper never ran: %v", err)
		}
		return strings.Count(string(b), "started\n")
	}

	r := runCommand(t, 60*time.Second, nil, "list", "--config", cfg)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("list: exit %d, stderr %q; want 0 and none", r.code, r.stderr)
	}
	const state = "checked: started once to check its point, then stopped; serve runs it"
	if !row("greeter", "service", wrap, "1", "greeter.Greeter", state).MatchString(r.stdout) {
		t.Errorf("PLUGINS row lacks protocol 1, greeter.Greeter and %q:\n%s", state, r.stdout)
	}
	if n := count(); n != 1 {
		t.Errorf("list started the plugin %d times; want 1", n)
	}

	r = runCommand(t, 60*time.Second, nil, "list", "--config", cfg, "--json")
	var doc struct {
		Plugins []struct {
			Name, State, Reason string
			Protocol            int
			Provides            []string
			PID                 int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || len(doc.Plugins) != 1 {
		t.Fatalf("--json: exit %d, %v, %d plugins; want exit 0, one\nstdout:\n%s\nstderr:\n%s", r.code, err, len(doc.Plugins), r.stdout, r.stderr)
	}
	p := doc.Plugins[0]
	if p.State != "checked" || p.Reason != "started once to check its point, then stopped; serve runs it" ||
		p.Protocol != 1 || len(p.Provides) != 1 || p.Provides[0] != "greeter.Greeter" || p.PID != 0 {
		t.Errorf("--json plugin: %+v; want state checked, that reason, protocol 1, provides [greeter.Greeter], pid 0", p)
	}
	if n := count(); n != 2 {
		t.Errorf("two lists started the plugin %d times; want 2", n)
	}
}

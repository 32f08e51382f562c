package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// `airnode list`'s PLUGINS table names its column for what it shows: the
// name the binary gives its extension, flagged when URLs select the
// plugin by another (its declared) name. The p2c example declared as
// acme.p2c next to the bundled p2c: "p2c (differs: URLs use acme.p2c)".
func TestListPluginsNameInBinaryColumn(t *testing.T) {
	p2c := buildPlugin(t, "github.com/airnode/airnode/examples/p2c/cmd/p2c")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.p2c, point: loadbalance, command: "+p2c+"}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list")
	if code != 0 {
		t.Fatalf("list: exit %d, stderr %q", code, errOut)
	}
	if !row("PLUGIN", "POINT", "BINARY", "PROTOCOL", "NAME", "IN", "BINARY", "STATE").MatchString(out) ||
		!row("acme.p2c", "loadbalance", p2c, "1", "p2c", "(differs:", "URLs", "use", "acme.p2c)", "running").MatchString(out) ||
		strings.Contains(out, "PROVIDES") {
		t.Errorf("list:\n%s", out)
	}
}

// A filter plugin that hangs before its handshake (start_timeout 1s):
// consumer commands wait for it (its activation and secret keys are known
// only from a running plugin) for its start_timeout, not longer, then go
// on without it, saying so, naming it and how long they waited; a URL
// that names it fails with the start's reason.
func TestHungFilterPluginCostsItsStartTimeoutAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	hang := writeScript(t, dir, "hang.sh", "exec sleep 60\n")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.hang, point: filter, command: "+hang+", start_timeout: 1s}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())
	warned := regexp.MustCompile(`plugin=acme.hang point=filter waited=(\S+) err=.*no handshake within start_timeout 1s`)
	for _, args := range [][]string{
		{"call", p.url("demo.Echo"), "Echo", `"x"`},
		{"registry", "ls", "--registry", "memory://"},
	} {
		began := time.Now()
		code, out, errOut := runBin(t, "", append([]string{"--config", cfg}, args...)...)
		took := time.Since(began)
		var waited time.Duration
		if m := warned.FindStringSubmatch(errOut); m != nil {
			waited, _ = time.ParseDuration(m[1])
		}
		t.Logf("%v: waited %v, took %v", args, waited, took)
		// waited is the command's own measure of its wait for the plugin:
		// its start_timeout, late by what a loaded machine adds, far from
		// the 10s default; the whole command takes that wait and a
		// process's start and a call more (bounded from the wait, not
		// from the test's start: under load the process alone took
		// seconds)
		if code != 0 || waited < time.Second || waited >= 5*time.Second || took < waited || took > waited+10*time.Second ||
			!strings.Contains(errOut, "filter plugin failed to start; this command goes on without it") {
			t.Errorf("%v: exit %d in %v (waited %v; want 1s to 5s)\nstdout:\n%s\nstderr:\n%s", args, code, took, waited, out, errOut)
		}
	}
	code, _, errOut := runBin(t, "", "--config", cfg, "call", p.url("demo.Echo")+"?filter=acme.hang", "Echo", `"x"`)
	if code != 1 || !strings.Contains(errOut, `pluginhost: plugin "acme.hang" (`+hang+`): no handshake within start_timeout 1s`) {
		t.Errorf("a call naming the hung filter: exit %d, stderr:\n%s", code, errOut)
	}
}

package cli

import (
	"strings"
	"testing"
	"time"
)

// tester79 #1: call --timeout replaces the configuration's timeouts of
// the called reference (flags beat files), and says so, naming the file's
// key and value: the service-level timeout and the called method's; a
// method-level timeout of the command line decides that method itself,
// and a file value equal to the flag's is no warning.
func TestAK_TimeoutFlagReplacingTheFileSaysSo(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	cfg := writeConfig(t, "references:\n  - {interface: demo.Echo, params: {timeout: 2s, methods.Sleep.timeout: 500ms}}\n")
	expectFail(t, call(t, env, "--config", cfg, "demo.Echo", "Sleep", "1000"), "SERVER_TIMEOUT")

	r := call(t, env, "--config", cfg, "--timeout", "3s", "demo.Echo", "Sleep", "1000")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "1000" {
		t.Fatalf("--timeout 3s: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"airnode: call: warning: --timeout 3s replaces the configuration's timeout=2s (flags beat files)\n",
		"airnode: call: warning: --timeout 3s replaces the configuration's methods.Sleep.timeout=500ms (flags beat files)\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--timeout 3s: stderr %q lacks %q", r.stderr, want)
		}
	}

	r = call(t, env, "--config", cfg, "--timeout", "2s", "-p", "methods.Sleep.timeout=600ms", "demo.Echo", "Sleep", "100")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "100" || strings.Contains(r.stderr, "replaces") {
		t.Fatalf("--timeout 2s -p methods.Sleep.timeout=600ms: exit %d, stdout %q, stderr %q; want no warning", r.code, r.stdout, r.stderr)
	}

	r = call(t, env, "--config", cfg, "--timeout", "3s", "demo.Echo", "Echo", `"x"`)
	if r.code != 0 || !strings.Contains(r.stderr, "replaces the configuration's timeout=2s") || strings.Contains(r.stderr, "methods.Sleep") {
		t.Fatalf("Echo: exit %d, stderr %q; want the service-level warning only", r.code, r.stderr)
	}
}

// tester79 #2: a reference for a misspelt interface is not applied, and
// call, bench and list --explain say so through their warning line.
func TestAK_MisspeltReferenceInterfaceIsNamed(t *testing.T) {
	cfg := writeConfig(t, "references:\n  - {interface: demo.Ecoh, params: {timeout: 2s}}\n")
	const want = "warning: the configuration has a reference for demo.Ecoh (references[0].interface) and none for demo.Echo: its params are not applied; did you mean demo.Echo there?"
	code, _, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if code != 0 || !strings.Contains(errOut, "airnode: list: "+want) {
		t.Errorf("list --explain: exit %d, stderr %q", code, errOut)
	}
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	r := call(t, env, "--config", cfg, "demo.Echo", "Echo", `"x"`)
	if r.code != 0 || strings.Count(r.stderr, want) != 1 {
		t.Errorf("call: exit %d, stderr %q; want one warning", r.code, r.stderr)
	}
	r = runCommand(t, 60*time.Second, env, "bench", "--config", cfg, "-n", "20", "demo.Echo")
	if r.code != 0 || !strings.Contains(r.stderr, "airnode: bench: "+want) {
		t.Errorf("bench: exit %d, stderr %q", r.code, r.stderr)
	}
}

// tester79 #5: -p timeout=5 is 5 ms: Refer's warning says so on call's
// stderr.
func TestAK_BareNumberTimeoutIsNamed(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	expectFail(t, call(t, env, "demo.Echo", "Sleep", "100", "-p", "timeout=5"), "", "SERVER_TIMEOUT",
		"timeout=5 is 5ms (a bare number is milliseconds, as in Dubbo); write 5s for seconds")
}

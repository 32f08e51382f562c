package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester F21: a service plugin whose process is frozen (SIGSTOP), not
// dead, was never noticed: every call timed out, serve logged nothing and
// `airnode health` said SERVING. Now serve warns naming the plugin when
// its calls pass their deadline unanswered, and once a liveness ping has
// gone unanswered for the bound (5s) `airnode health` answers NOT_SERVING
// naming it; after SIGCONT it answers again, without a restart, and the
// service is SERVING again.
func TestF21FrozenServicePluginGoesNotServing(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: calc, point: service, command: " + greeter + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", filepath.Join(dir, "reg"), "--config", cfg)
	expectOK(t, call(t, nil, p.url("greeter.Greeter"), "Hello", `"Ann"`), `"Hello, Ann"`)
	if r := health(t, p.addr, "greeter.Greeter"); r.code != 0 {
		t.Fatalf("health before the freeze: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "calc" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	pid, _ := strconv.Atoi(m[2])
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	stopped := time.Now()

	r := call(t, nil, "--timeout", "300ms", p.url("greeter.Greeter"), "Hello", `"Bob"`)
	if r.code == 0 || !strings.Contains(r.stderr, "TIMEOUT") {
		t.Fatalf("call of the frozen plugin: exit %d, stdout %q, stderr %q; want a timeout", r.code, r.stdout, r.stderr)
	}
	waitFor(t, "serve's warning that the plugin did not answer calls", func() bool {
		return strings.Contains(p.logText(), "plugin did not answer calls within their deadline")
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = health(t, p.addr, "greeter.Greeter")
		if r.code == 1 && strings.TrimSpace(r.stdout) == "NOT_SERVING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health 30s after SIGSTOP: exit %d, stdout %q, stderr %q; want NOT_SERVING", r.code, r.stdout, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("NOT_SERVING %v after SIGSTOP: %s", time.Since(stopped).Round(time.Millisecond), strings.TrimSpace(r.stderr))
	if !strings.Contains(r.stderr, `"calc"`) || !strings.Contains(r.stderr, "unresponsive") {
		t.Fatalf("NOT_SERVING does not name the unresponsive plugin: %q", r.stderr)
	}
	if !strings.Contains(p.logText(), "plugin does not answer") {
		t.Fatalf("serve did not warn about the unresponsive plugin:\n%s", p.logText())
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for r = health(t, p.addr, "greeter.Greeter"); r.code != 0; r = health(t, p.addr, "greeter.Greeter") {
		if time.Now().After(deadline) {
			t.Fatalf("health 20s after SIGCONT: exit %d, stdout %q, stderr %q; want SERVING", r.code, r.stdout, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	expectOK(t, call(t, nil, p.url("greeter.Greeter"), "Hello", `"Ann"`), `"Hello, Ann"`)
	if !strings.Contains(p.logText(), "plugin answers again") {
		t.Fatalf("serve did not say the plugin answers again:\n%s", p.logText())
	}
	if strings.Contains(p.logText(), "restarting") {
		t.Fatalf("serve restarted a frozen plugin:\n%s", p.logText())
	}
}

package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// health runs `airnode health args...`.
func health(t *testing.T, args ...string) result {
	t.Helper()
	return runCommand(t, 20*time.Second, nil, "health", args...)
}

// The real serve answers airnode.Health on its RPC address: `airnode
// health` exits 0 for SERVING and 1 for SERVICE_UNKNOWN, saying why;
// `airnode call` reaches the same service (a string argument, or gRPC's
// array and object shapes); `registry ls` does not list it; from SIGTERM
// on, during --shutdown-wait, the service and the node are NOT_SERVING.
func TestHealth2ServeAnswersHealthChecks(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "--shutdown-wait", "3s", "--metrics", "127.0.0.1:0")

	r := health(t, p.addr, "demo.Echo")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" || r.stderr != "" {
		t.Fatalf("health demo.Echo: exit %d, stdout %q, stderr %q; want 0 SERVING", r.code, r.stdout, r.stderr)
	}
	if r := health(t, "airnode://"+p.addr); r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" {
		t.Fatalf("health of the node: exit %d, stdout %q, stderr %q; want 0 SERVING", r.code, r.stdout, r.stderr)
	}
	r = health(t, p.addr, "nope.Svc")
	if r.code != 1 || strings.TrimSpace(r.stdout) != "SERVICE_UNKNOWN" || !strings.Contains(r.stderr, "nope.Svc is not exported on "+p.addr) {
		t.Fatalf("health nope.Svc: exit %d, stdout %q, stderr %q; want 1 SERVICE_UNKNOWN saying why", r.code, r.stdout, r.stderr)
	}
	for _, arg := range []string{`"demo.Echo"`, `["demo.Echo"]`, `{"service":"demo.Echo"}`} {
		expectOK(t, call(t, nil, p.url("airnode.Health"), "Check", arg), `"SERVING"`)
	}
	if r := health(t, p.addr+"/demo.Echo"); r.code != exitUsage || !strings.Contains(r.stderr, "give the address alone") {
		t.Fatalf("health ADDR/demo.Echo: exit %d, stderr %q; want a usage error", r.code, r.stderr)
	}

	ls := runCommand(t, 20*time.Second, nil, "registry", "ls", "--registry", "file://"+dir)
	if ls.code != 0 || !strings.Contains(ls.stdout, "demo.Echo") || strings.Contains(ls.stdout, "airnode.Health") {
		t.Fatalf("registry ls: exit %d, stdout %q, stderr %q; want demo.Echo listed and airnode.Health not", ls.code, ls.stdout, ls.stderr)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "health answering NOT_SERVING after SIGTERM", func() bool {
		return strings.TrimSpace(health(t, p.addr, "demo.Echo").stdout) == "NOT_SERVING"
	})
	r = health(t, p.addr, "demo.Echo")
	if r.code != 1 || strings.TrimSpace(r.stdout) != "NOT_SERVING" || !strings.Contains(r.stderr, "demo.Echo on "+p.addr+" is NOT_SERVING: draining: SIGTERM received") {
		t.Errorf("health demo.Echo during the drain: exit %d, stdout %q, stderr %q; want 1 NOT_SERVING draining", r.code, r.stdout, r.stderr)
	}
	r = health(t, p.addr)
	if r.code != 1 || strings.TrimSpace(r.stdout) != "NOT_SERVING" || !strings.Contains(r.stderr, "the node on "+p.addr+" is NOT_SERVING: draining: SIGTERM received") {
		t.Errorf("health of the node during the drain: exit %d, stdout %q, stderr %q; want 1 NOT_SERVING draining", r.code, r.stdout, r.stderr)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	// gone: no answer, exit 1 with the status
	r = health(t, "--timeout", "500ms", p.addr, "demo.Echo")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "CHANNEL_INACTIVE") {
		t.Errorf("health of a stopped serve: exit %d, stdout %q, stderr %q; want 1 CHANNEL_INACTIVE", r.code, r.stdout, r.stderr)
	}
}

// serve -p health.service=false serves no health service: health exits 1
// with SERVICE_NOT_FOUND.
func TestHealth2ServiceOff(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "health.service=false")
	r := health(t, p.addr, "demo.Echo")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || !strings.Contains(r.stderr, `"airnode.Health" is not exported`) {
		t.Fatalf("health with health.service=false: exit %d, stdout %q, stderr %q; want 1 SERVICE_NOT_FOUND", r.code, r.stdout, r.stderr)
	}
}

package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssKiB returns the resident set size of process pid in KiB (Linux).
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// Tester's bug 5: Payload 1073741824 is refused with BAD_REQUEST naming
// the provider's payload limit, before the provider allocates it.
func TestE2E_HugePayloadRefusedBeforeAllocating(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Payload", "1073741824"), "BAD_REQUEST", "8 MiB")
	if rss := rssKiB(t, p.cmd.Process.Pid); rss > 256<<10 {
		t.Fatalf("provider resident set %d KiB after the refused call, want well under 1 GiB", rss)
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
}

// serveFails runs `airnode serve` with args, which must exit non-zero
// before serving; it returns the combined output.
func serveFails(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("serve %v: %v (want a non-zero exit at startup)\n%s", args, err, out)
	}
	if strings.Contains(string(out), "serving") {
		t.Fatalf("serve %v served before failing:\n%s", args, out)
	}
	return string(out)
}

// Tester's bugs 3 and 7: -p values no consumer could use, and the keys
// the provider sets itself, stop serve at startup with an error naming
// them, instead of registering an unusable provider or silently replacing
// the value.
func TestE2E_ServeRejectsBadParams(t *testing.T) {
	for _, tc := range []struct{ param, want string }{
		{"timeout=abc", "abc"},
		{"codec=bogus", "bogus"},
		{"connections=999", "connections"},
		{"timestamp=1", "set by the provider"},
		{"side=consumer", "set by the provider"},
		{"methods=Echo", "set by the provider"},
		{"pid=1", "set by the provider"},
	} {
		out := serveFails(t, "-p", tc.param)
		key, _, _ := strings.Cut(tc.param, "=")
		if !strings.Contains(out, tc.want) || !strings.Contains(out, key) {
			t.Errorf("serve -p %s: output does not name %q and %q:\n%s", tc.param, key, tc.want, out)
		}
	}
}

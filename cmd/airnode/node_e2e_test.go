package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
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

package cli

import (
	"strings"
	"testing"
)

// nu83 #2: call --timeout 1s with ZooKeeper down said only that the
// registry's Subscribe "did not return within 999ms; left running",
// CLIENT_ERROR; it now says the registry's cause (the address, no
// session, connection refused) and fails CLIENT_TIMEOUT, as the
// --timeout's other expiries. Nothing listens on 127.0.0.1:37799.
func TestAy_CallTimeoutWhileReferringSaysTheRegistrysCause(t *testing.T) {
	t.Parallel()
	r := call(t, nil, "--timeout", "1s", "--registry", "zookeeper://127.0.0.1:37799", "demo.Echo", "Echo", `"x"`)
	t.Logf("%v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "CLIENT_TIMEOUT", "no session with 127.0.0.1:37799", "connection refused",
		"--timeout 1s ran out while referring demo.Echo")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if last := lines[len(lines)-1]; strings.Contains(last, "stopped waiting") {
		t.Errorf("the error says %q where it can say the cause: %s", "stopped waiting", last)
	}
	// nu83 #2 (fix-az): the WARN line before it said "left running",
	// internal jargon; it says what that means for the user
	warn := `level=WARN msg="refer demo.Echo: registry \"zookeeper\" Subscribe of demo.Echo did not return before the caller's context deadline passed, after `
	if !strings.Contains(r.stderr, warn) || !strings.Contains(r.stderr, `; stopped waiting for it (it may still finish later)"`) || strings.Contains(r.stderr, "left running") {
		t.Errorf("stderr lacks a WARN line %s...; stopped waiting for it (it may still finish later), or says \"left running\":\n%s", warn, r.stderr)
	}
}

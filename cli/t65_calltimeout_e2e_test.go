package cli

import (
	"strings"
	"testing"
	"time"
)

// tester65 #5: `call --timeout 300ms` against a hung (SIGSTOPped)
// provider took 3 s (connect.timeout) and failed CHANNEL_INACTIVE, where
// `health --timeout` bounds connecting too. --timeout now bounds the whole
// command: connect.timeout is cut to it, and the error says so.
func TestT65_5_CallTimeoutBoundsConnecting(t *testing.T) {
	p := serveStopped(t, t.TempDir())
	r := call(t, nil, "--timeout", "300ms", "airnode://"+p.addr+"/demo.Echo", "Echo", `"x"`)
	t.Logf("hung provider, --timeout 300ms: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "CLIENT_TIMEOUT", "within --timeout 300ms, connecting included", "connect.timeout 300ms", "-p connect.timeout")
	// the binary's start is part of elapsed: a generous bound, far under
	// connect.timeout's 3 s
	if r.elapsed > 2*time.Second {
		t.Errorf("call took %v; want about --timeout 300ms (connect.timeout 3s not cut)", r.elapsed)
	}

	// connect.timeout set: the first connection gets its own time (700 ms
	// here), --timeout the call alone, as before
	r = call(t, nil, "--timeout", "300ms", "-p", "connect.timeout=700ms", "airnode://"+p.addr+"/demo.Echo", "Echo", `"x"`)
	t.Logf("hung provider, connect.timeout 700ms: %v: %s", r.elapsed, r.stderr)
	if r.code != 1 || r.elapsed < 700*time.Millisecond || !strings.Contains(r.stderr, "700ms (connect.timeout)") {
		t.Errorf("exit %d after %v, stderr %q; want exit 1 after connect.timeout 700ms, naming it", r.code, r.elapsed, r.stderr)
	}
}

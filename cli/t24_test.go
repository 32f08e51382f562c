package cli

import (
	"strings"
	"testing"
	"time"
)

// tester24 finding 8: `airnode call --timeout 100ms` over a link where the
// first connection takes longer than 100 ms failed CLIENT_TIMEOUT "waiting
// for a first connection" every time, while bench gave its first
// connection time of its own. With connect.timeout set, call waits for a
// provider to connect (up to twice connect.timeout and 1 s) before the
// call, whose timeout then bounds the call alone (unset, --timeout bounds
// connecting too: tester65 #5, TestT65_5_CallTimeoutBoundsConnecting).
func TestT24_8_CallWaitsForTheFirstConnection(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	slow := delayProxy(t, p.addr, 300*time.Millisecond)
	start := time.Now()
	code, out, errOut := runCLI(t, []string{"call", "airnode://" + slow + "/demo.Echo?connect.timeout=3s", "--timeout", "100ms", "Echo", `"hi"`})
	if code != 0 || strings.TrimSpace(out) != `"hi"` {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and \"hi\"", code, out, errOut)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("answered after %v, before the proxy's 300ms connect delay", d)
	}

	// A provider that never connects: the wait ends (connect.timeout
	// 200ms: 1.4 s) and the call says why.
	hung := delayProxy(t, p.addr, time.Minute)
	start = time.Now()
	code, _, errOut = runCLI(t, []string{"call", "airnode://" + hung + "/demo.Echo?connect.timeout=200ms", "--timeout", "100ms", "Echo", `"hi"`})
	if code == 0 || !strings.Contains(errOut, "first ping") && !strings.Contains(errOut, "first connection") {
		t.Fatalf("exit %d, stderr %q; want a failure naming the first connection", code, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("gave up after %v; want about twice connect.timeout and 1 s", d)
	}
}

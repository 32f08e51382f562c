package cli

import (
	"strings"
	"testing"
	"time"
)

// tester83 #5: a reference URL with several bad keys was refused for the
// first one only, the next one on the next run. `airnode call` now
// shows every refusal at once, each with its did-you-mean, and the
// keys it only warns of stay warnings.
func TestBA_CallShowsEveryBadKeyAtOnce(t *testing.T) {
	t.Parallel()
	// nothing listens on the address: Refer refuses the URL before any dial
	r := runCommand(t, 30*time.Second, nil, "call", "-p", "loadbalance=roundrobn", "-p", "timeout=5x", "-p", "retires=3",
		"airnode://127.0.0.1:37101/demo.Echo", "Echo", `"x"`)
	if r.code != exitUsage { // -p's values: a usage error (fix-bs)
		t.Fatalf("call: exit %d, want 2, the bad keys refused; stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		`airnode: call: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" (available: `, `did you mean "roundrobin"?`,
		"\ncall: -p timeout=5x: service demo.Echo: invalid value \"5x\" for URL key \"timeout\"",
		"level=WARN", "key=retires did_you_mean=retries",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

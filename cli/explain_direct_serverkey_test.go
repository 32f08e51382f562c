package cli

import (
	"strings"
	"testing"
)

// fix-i leftover: a direct URL with a method-level form of a per-address
// key (Echo.heartbeat) is warned of by list --explain, as call warns of it
// and goes on, naming serve's refusal.
func TestExplainDirectURLMethodServerKeyIsAWarning(t *testing.T) {
	const refusal = `URL key "Echo.heartbeat" sets heartbeat for method Echo, but heartbeat is per listening address`
	code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?Echo.heartbeat=dual")
	if code != 0 || !strings.Contains(errOut, "airnode: list: warning: "+refusal) || !strings.Contains(errOut, "serve refuses it in a provider URL") || !strings.Contains(out, "KEY") {
		t.Errorf("direct URL: exit %d, stderr %q; want exit 0, the warning, and the explanation", code, errOut)
	}
}

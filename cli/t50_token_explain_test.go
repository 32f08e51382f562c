package cli

import (
	"strings"
	"testing"
)

// nu50 finding 1: list --explain of a registry reference with a token
// of its own says the token is not used (the provider's published one
// is sent), as Refer warns, and never prints the value; a direct URL,
// which sends its own token, gets no such warning.
func TestT50_ExplainWarnsARegistryReferencesTokenIsNotUsed(t *testing.T) {
	const warn = "airnode: list: warning: token=*** has no effect: through a registry each call sends the token its provider publishes"
	_, out, errOut := airnode(t, nil, "list", "--explain", "demo.Echo?token=wrongT50")
	if strings.Count(errOut, warn) != 1 {
		t.Errorf("stderr %q; want one %q", errOut, warn)
	}
	if strings.Contains(out+errOut, "wrongT50") {
		t.Errorf("the token's value is shown:\n%s\n%s", out, errOut)
	}
	_, _, errOut = airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?token=wrongT50")
	if strings.Contains(errOut, "token=***") {
		t.Errorf("a direct URL warned its token is not used: %q", errOut)
	}
}

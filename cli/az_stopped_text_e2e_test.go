package cli

import (
	"strings"
	"testing"
)

// nu83 #4: `call --timeout 300ms` against a SIGSTOPped provider said its
// cause in about 800 characters: the connection error pointed to a log
// call does not show ("the log counts the connection attempts"), and
// the first ping's own error ("SERVER_TIMEOUT: exchange: ping ADDR: no
// answer: context deadline exceeded") repeated "nothing answered the
// first ping within 300ms". The text keeps the cause, the bound and the
// fixes, once each.
func TestAz_CallToAStoppedProviderSaysItOnce(t *testing.T) {
	p := serveStopped(t, t.TempDir())
	r := call(t, nil, "--timeout", "300ms", "airnode://"+p.addr+"/demo.Echo", "Sleep", "10")
	t.Logf("%d characters: %s", len(r.stderr), r.stderr)
	failsWith(t, r, "CLIENT_TIMEOUT", "within --timeout 300ms, connecting included", "-p connect.timeout",
		"cannot connect to provider "+p.addr+" (redialed with backoff): ",
		"nothing answered the first ping within 300ms (connect.timeout)", "airnode provider listening there", "raise connect.timeout")
	for _, redundant := range []string{"the log", "no answer", "context deadline exceeded", "SERVER_TIMEOUT"} {
		if strings.Contains(r.stderr, redundant) {
			t.Errorf("the message says %q:\n%s", redundant, r.stderr)
		}
	}
	if n := len(strings.TrimSpace(r.stderr)); n > 650 {
		t.Errorf("the message is %d characters long, want at most 650:\n%s", n, r.stderr)
	}
}

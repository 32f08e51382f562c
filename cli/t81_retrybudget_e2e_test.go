package cli

import (
	"strings"
	"testing"
)

// tester81 #2: list --explain shows the retry budget that applies, the
// reference's service-level retry.tokens or the default, and shows a
// method-level form and a provider's value as not used, with why, as
// failover reads neither; the method-level forms are warned of.
func TestT81_ExplainShowsTheRetryBudgetThatApplies(t *testing.T) {
	provider := "airnode://10.0.0.1:20880/demo.Echo?methods=Echo,Sleep&retry.tokens=10&Sleep.retry.ratio=0.5"
	code, out, errOut := airnode(t, nil, "list", "--explain", "consumer://10.0.0.9/demo.Echo?Sleep.retry.tokens=5", "--provider", provider)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range [][]string{
		{"retry.tokens", "service", "0", "default (failover)"},
		{"service", "(the provider's retry.tokens=10 is not used: cluster failover reads it from the reference's own URL, and a provider's value is not its consumers' default)"},
		{"method Sleep", "(Sleep.retry.tokens=5 is not used: retry.tokens is read at service level only: cluster failover reads it once per reference, from the reference URL's service-level keys (-p retry.tokens=...))"},
		{"retry.ratio", "service", "0.1", "default (failover)"},
		{"method Sleep", "(the provider's Sleep.retry.ratio=0.5 is not used: retry.ratio is read at service level only: cluster failover reads it once per reference, from the reference URL's service-level keys (-p retry.ratio=...))"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", r, out)
		}
	}
	if row("retry.tokens", "method Sleep", "5").MatchString(out) || row("retry.tokens", "service", "10").MatchString(out) {
		t.Errorf("output shows a retry budget that does not apply:\n%s", out)
	}
	if want := "warning: Sleep.retry.tokens=5 has no effect: retry.tokens is read at service level only"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	code, out, errOut = airnode(t, nil, "list", "--explain", "consumer://10.0.0.9/demo.Echo?retry.tokens=20", "--provider", provider)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if r := []string{"retry.tokens", "service", "20", "SERVICE_URL query (retry.tokens)"}; !row(r...).MatchString(out) {
		t.Errorf("output lacks %q:\n%s", r, out)
	}
}

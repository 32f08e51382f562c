package cli

import (
	"strings"
	"testing"
	"time"
)

// nu77 #2: `airnode plugin check` passes a provider-side gate filter
// given what its calls carry. The tenant example with the flags
// sdk/README documents (its provider side gets the tenant its consumer
// side set, --filter-adds-attachment tenant) exits 0; it failed
// provider/PassThrough, ErrorPropagated and Concurrent, the suite sending
// the provider side no attachment. A provider-only gate (acmeplug's
// acme.authz, which wants x-auth equal to authz.key) fails without the
// attachment, the failure naming --filter-attachment, and passes with
// --filter-attachment x-auth=k.
func TestPluginCheckPassesAProviderSideGate(t *testing.T) {
	t.Parallel()
	check := func(args ...string) result {
		return runCommand(t, 120*time.Second, noAirnodeEnv, "plugin", append([]string{"check"}, args...)...)
	}
	passed := func(r result) bool {
		return r.code == 0 && strings.Contains(r.stdout, "--- PASS: Conformance/filter/provider ") && strings.Contains(r.stdout, "result       ok")
	}
	tenant := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	if r := check(tenant, "--filter-param", "tenant=acme", "--filter-adds-attachment", "tenant"); !passed(r) {
		t.Errorf("tenant with the documented flags: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	authz := acmePlugin(t)
	r := check(authz, "--filter-param", "authz.key=k")
	if r.code == 0 || !strings.Contains(r.stdout, "acme.authz: bad x-auth") ||
		!strings.Contains(r.stdout, "the filter answered without calling next") || !strings.Contains(r.stdout, "airnode plugin check --filter-attachment KEY=VALUE") {
		t.Errorf("authz without x-auth: exit %d; want a failure naming --filter-attachment\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := check(authz, "--filter-param", "authz.key=k", "--filter-attachment", "x-auth=k"); !passed(r) {
		t.Errorf("authz with --filter-attachment x-auth=k: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := check(authz, "--filter-attachment", "novalue"); r.code == 0 || !strings.Contains(r.stderr, `--filter-attachment "novalue": want KEY=VALUE`) {
		t.Errorf("--filter-attachment without =: exit %d\n%s", r.code, r.stderr)
	}
}

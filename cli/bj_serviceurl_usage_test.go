package cli

import (
	"strings"
	"testing"
	"time"
)

// TestBJ_MalformedServiceURLExitsUsage (fix-bj, tester87): every command
// that takes a SERVICE_URL (or a registry subcommand's SERVICE key)
// refuses one of the wrong form as a usage error, exit 2, naming what
// was wrong, as call does: list --explain (and its --provider) exited 1
// for the unbracketed IPv6 host call refused with 2; registry ls and
// watch exited 1 for a malformed service key. The real binary; nothing
// listens on the ports: a usage error is found before anything is
// dialled. (A host without a port: TestBK_ListExplainHostWithoutPortIsAUsageError.)
func TestBJ_MalformedServiceURLExitsUsage(t *testing.T) {
	t.Parallel()
	const unbracketed = "airnode://::1:37401/demo.Echo"
	const bracketsMsg = `url: IPv6 address "::1:37401" must be in brackets, e.g. [::1]:37401`
	for _, c := range []struct {
		args   []string
		prefix string // of stderr
		has    string
	}{
		{[]string{"call", unbracketed, "Echo", "1"}, "airnode: call: ", bracketsMsg},
		{[]string{"bench", "-n", "1", unbracketed}, "airnode: bench: ", bracketsMsg},
		{[]string{"list", "--explain", unbracketed}, "airnode: list --explain: ", bracketsMsg},
		{[]string{"list", "--explain", "airnode://127.0.0.1:37401/x%zz"}, "airnode: list --explain: ", `invalid URL escape "%zz"`},
		{[]string{"list", "--explain", "g/"}, "airnode: list --explain: ", "want [group/]interface"},
		{[]string{"list", "--explain", "demo.Echo#Echo"}, `airnode: list --explain: SERVICE_URL "demo.Echo#Echo": `, "a method is not part of SERVICE_URL"},
		{[]string{"list", "--explain", "demo.Echo", "--provider", unbracketed}, "airnode: list --provider: ", bracketsMsg},
		{[]string{"registry", "ls", "--registry", "memory://", "g/"}, `airnode: registry ls: service "g/": `, "want [group/]interface"},
		{[]string{"registry", "watch", "--registry", "memory://", "demo.Echo?a=%zz"}, `airnode: registry watch: service "demo.Echo?a=%zz": `, "%zz"},
	} {
		r := runCommand(t, 30*time.Second, noAirnodeEnv, c.args[0], c.args[1:]...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, c.prefix) || !strings.Contains(r.stderr, c.has) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("airnode %s: exit %d, stderr %q; want exit 2 and one line starting %q with %q", strings.Join(c.args, " "), r.code, r.stderr, c.prefix, c.has)
		}
		if r.stdout != "" {
			t.Errorf("airnode %s: stdout %q; want nothing", strings.Join(c.args, " "), r.stdout)
		}
	}
	// a well-formed bracketed IPv6 SERVICE_URL is explained (exit 0)
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "list", "--explain", "airnode://[::1]:37401/demo.Echo")
	if r.code != 0 || !strings.Contains(r.stdout, "service  demo.Echo") {
		t.Errorf("list --explain airnode://[::1]:37401/demo.Echo: exit %d, stdout %.300q, stderr %q; want exit 0 and the explanation", r.code, r.stdout, r.stderr)
	}
}

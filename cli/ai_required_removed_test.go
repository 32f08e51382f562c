package cli

import (
	"strings"
	"testing"
)

// A required consumer filter plugin that never started failed every call
// and bench at start, even one whose URL removes the filter
// (filter=-acme.auth, or -default without naming it): such a filter is
// not in the chain whatever its activation (extension.FilterRemoved), so
// its being down does not fail the command; it is warned of as a filter
// plugin that is not required. A URL that does not remove it still fails.
func TestRequiredFilterPluginRemovedByTheURLDoesNotFailTheCall(t *testing.T) {
	bad := exitsAtStart(t)
	p := serve(t, "127.0.0.1:0", t.TempDir())
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bad+", required: true}\n")
	for _, args := range [][]string{
		{p.url("demo.Echo") + "?filter=-acme.auth", "Echo", `"x"`},
		{"-p", "filter=-acme.auth", p.url("demo.Echo"), "Echo", `"x"`},
		{"-p", "filter=-default", p.url("demo.Echo"), "Echo", `"x"`},
	} {
		r := call(t, nil, append([]string{"--config", cfg}, args...)...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"x"` || strings.Contains(r.stderr, "is required") ||
			!strings.Contains(r.stderr, "airnode: call: warning: filter plugin failed to start; this command goes on without it") {
			t.Errorf("call %v: exit %d, stdout %q, stderr:\n%s\nwant exit 0, \"x\" and the warning", args, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{
		{p.url("demo.Echo"), "Echo", `"x"`},
		{"-p", "filter=-default,acme.auth", p.url("demo.Echo"), "Echo", `"x"`},
	} {
		r := call(t, nil, append([]string{"--config", cfg}, args...)...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, `key "plugins[0].required": filter plugin "acme.auth" is required but failed to start`) {
			t.Errorf("call %v: exit %d, stdout %q, stderr:\n%s\nwant exit 1 naming plugins[0].required", args, r.code, r.stdout, r.stderr)
		}
	}
}

package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-dd #1: a URL whose path is a service key, airnode:///g/demo.Echo:1.0,
// took the whole path as the interface and waited for a provider no one
// can export. It is refused as a usage error naming the path and the same
// URL with group= and version= as keys; the URL suggested calls the
// provider (the real binary, real TCP).
func TestDD_ServiceKeyInURLPathIsRefusedWithTheURLThatWorks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "-p", "group=g", "-p", "version=1.0")

	r := runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--registry", "file://"+dir, "airnode:///g/demo.Echo:1.0", "Echo", `"x"`)
	expectUsage(t, r, `airnode: call: service URL "airnode:///g/demo.Echo:1.0": path "g/demo.Echo:1.0" is not an interface: `,
		"(airnode://HOST:PORT/demo.Echo?group=g&version=1.0); did you mean airnode:///demo.Echo?group=g&version=1.0 (or the service key g/demo.Echo:1.0)")

	direct := p.url("g/demo.Echo:1.0?timeout=2s")
	r = call(t, noAirnodeEnv, direct, "Echo", `"x"`)
	expectUsage(t, r, `airnode: call: service URL "`+direct+`": path "g/demo.Echo:1.0" is not an interface: `,
		"did you mean airnode://"+p.addr+"/demo.Echo?group=g&timeout=2s&version=1.0\n")

	// a group given twice, differently: no guess
	r = call(t, noAirnodeEnv, p.url("g/demo.Echo?group=h"), "Echo", `"x"`)
	expectUsage(t, r, "airnode: call: ", `path "g/demo.Echo" is not an interface`)
	if got := r.stderr; strings.Contains(got, "did you mean") {
		t.Errorf("stderr %q; want no suggestion for a group given twice", got)
	}

	// the URLs suggested work
	expectOK(t, call(t, noAirnodeEnv, "--registry", "file://"+dir, "airnode:///demo.Echo?group=g&version=1.0", "Echo", `"x"`), `"x"`)
	expectOK(t, call(t, noAirnodeEnv, "airnode://"+p.addr+"/demo.Echo?group=g&timeout=2s&version=1.0", "Echo", `"x"`), `"x"`)
}

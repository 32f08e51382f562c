package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-cu #3: SERVICE and METHOD swapped with a group and version
// (`call g/Echo:1.0 demo.Echo`) suggested "call demo.Echo Echo", which
// drops them; and through a registry the swap got only "no provider
// available". The hint now keeps the group and version, on the command
// line, from a direct provider and from the registry's listing.
func TestCU_SwappedServiceAndMethodKeepGroupAndVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "-p", "group=g", "-p", "version=1.0")
	reg := "file://" + dir

	r := runCommand(t, 20*time.Second, noAirnodeEnv, "call", "g/Echo:1.0", "demo.Echo", `"hi"`)
	expectUsage(t, r, "airnode: call: ", `did you mean service "g/demo.Echo:1.0", method "Echo"? (call g/demo.Echo:1.0 Echo ...;`)

	r = call(t, noAirnodeEnv, p.url("Echo?group=g&version=1.0"), "demo.Echo", `"hi"`)
	expectFail(t, r, `SERVICE_NOT_FOUND: service "g/Echo:1.0" is not exported on `+p.addr, `did you mean service "g/demo.Echo:1.0", method "Echo"?`)

	// (airnode:///g/Echo:1.0, a service key as a URL's path, is refused
	// before the swap is looked at: TestDD_ServiceKeyInURLPathIsRefusedWithTheURLThatWorks)
	for _, svc := range []string{"airnode:///Echo?group=g&version=1.0", "airnode:///Echo"} {
		r = runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--registry", reg, "--timeout", "1s", svc, "demo.Echo", `"hi"`)
		expectFail(t, r, "SERVICE_NOT_FOUND: no provider available for ", `; did you mean service "g/demo.Echo:1.0", method "Echo"?`)
	}
	// the registry lists another group only: that one is named
	serve(t, "127.0.0.1:0", dir, "-p", "group=h")
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--registry", reg, "--timeout", "1s", "airnode:///Echo?group=h", "demo.Echo", `"hi"`)
	expectFail(t, r, "SERVICE_NOT_FOUND: no provider available for h/Echo", `; did you mean service "h/demo.Echo", method "Echo"?`)
	// a method that names no listed service: no such hint
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "call", "--registry", reg, "--timeout", "1s", "airnode:///Echo", "demo.Nope", `"hi"`)
	expectFail(t, r, "SERVICE_NOT_FOUND: no provider available for Echo")
	if strings.Contains(r.stderr, "did you mean service") {
		t.Errorf("call Echo demo.Nope: stderr %q; want no service suggested", r.stderr)
	}
}

package cli

import (
	"strings"
	"testing"
	"time"
)

// tester85 #11: call took the method written into SERVICE_URL in some
// spellings (demo.Echo/Echo read as group "demo.Echo" of an interface
// "Echo": a wait, then SERVICE_NOT_FOUND; demo.Echo#Echo a bare
// "fragment" error). Every form the help and README document answers;
// the method-holding spellings are usage errors (exit 2, at once) naming
// the method and listing the accepted forms, and demo.Echo.Echo, which a
// Java-style interface may be, fails SERVICE_NOT_FOUND with that hint.
func TestBF_CallServiceURLForms(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	g := serve(t, "127.0.0.1:0", strings.TrimPrefix(p.reg, "file://"), "-p", "warmup=0", "-p", "group=g", "-p", "version=1.0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	for _, svc := range []string{"demo.Echo", "airnode:///demo.Echo", p.url("demo.Echo"), "g/demo.Echo:1.0",
		"demo.Echo:1.0?group=g", "demo.Echo?group=g&version=1.0", g.url("demo.Echo") + "?group=g&version=1.0"} {
		if r := call(t, env, svc, "Echo", `"hi"`); r.code != 0 || r.stdout != "\"hi\"\n" {
			t.Errorf("call %s Echo: exit %d, stdout %q, stderr %q; want the answer", svc, r.code, r.stdout, r.stderr)
		}
	}
	const forms = `SERVICE_URL is a service key, [group/]interface[:version][?key=value&...] ("demo.Echo", "g/demo.Echo:1.0", "demo.Echo?group=g&version=1.0"), airnode:///demo.Echo, or airnode://host:port/demo.Echo for a direct call; the method is the next argument`
	for _, svc := range []string{"demo.Echo/Echo", "demo.Echo#Echo", p.url("demo.Echo") + "/Echo", p.url("demo.Echo") + "#Echo", "g/demo.Echo/Echo:1.0"} {
		r := call(t, env, svc, `"hi"`)
		if r.code != 2 || !strings.Contains(r.stderr, `"Echo" after`) || !strings.Contains(r.stderr, "(call demo.Echo Echo ...)") || !strings.Contains(r.stderr, forms) || r.elapsed > 1500*time.Millisecond {
			t.Errorf("call %s '\"hi\"': exit %d after %v, stderr %q; want a usage error at once naming the method and listing the forms", svc, r.code, r.elapsed, r.stderr)
		}
	}
	r := call(t, env, "demo.Echo.Echo", `"hi"`)
	if r.code != 1 || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || !strings.Contains(r.stderr, "if Echo is the method, give it apart: call demo.Echo Echo ... ("+forms) {
		t.Errorf("call demo.Echo.Echo: exit %d, stderr %q; want SERVICE_NOT_FOUND with the hint", r.code, r.stderr)
	}
	// a group of its own and a Java-style interface keep their meaning
	for _, svc := range []string{"dev/demo.Echo", "com.acme.EchoService"} {
		if r := call(t, env, svc, "Echo", `"hi"`); r.code != 1 || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || strings.Contains(r.stderr, "is the method") || strings.Contains(r.stderr, "reads as a method") {
			t.Errorf("call %s: exit %d, stderr %q; want SERVICE_NOT_FOUND without a method hint", svc, r.code, r.stderr)
		}
	}
}

package cli

import (
	"strings"
	"testing"
)

// tester85 #6, #7: call -p executes=abc and -p threads=512 (keys only a
// provider reads) did nothing and said nothing: the real call now warns
// of each, naming a malformed value, and still answers; list --explain
// says the same of the URL.
func TestBF_CallWarnsOfProviderKeys(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	const msg = `msg="URL key is a provider key: it has no effect on a call; set it on the provider (serve URL)"`
	for _, tc := range []struct{ param, want string }{
		{"executes=abc", `key=executes value=abc invalid="want an integer from 0 (no limit) to 1048576"`},
		{"threads=512", "key=threads value=512"},
	} {
		r := call(t, env, "-p", tc.param, "demo.Echo", "Echo", `"hi"`)
		if r.code != 0 || r.stdout != "\"hi\"\n" || !strings.Contains(r.stderr, msg) || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("call -p %s: exit %d, stdout %q, stderr %q; want the answer and %s %s", tc.param, r.code, r.stdout, r.stderr, msg, tc.want)
		}
	}
	if r := call(t, env, "-p", "actives=3", "demo.Echo", "Echo", `"hi"`); r.code != 0 || strings.Contains(r.stderr, "provider key") {
		t.Errorf("call -p actives=3 (a consumer key): exit %d, stderr %q; want no warning", r.code, r.stderr)
	}

	code, _, errOut := airnode(t, bundled(t), "list", "--explain", "airnode://127.0.0.1:36700/demo.Echo?executes=5&threads=512")
	for _, want := range []string{
		"warning: executes=5 is a provider key: it has no effect on a call; set it on the provider (serve URL: serve -p executes=...",
		"warning: threads=512 is a provider key: it has no effect on a call; set it on the provider (serve URL: serve -p threads=...",
	} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("list --explain: exit %d, stderr %q; want %q", code, errOut, want)
		}
	}
}

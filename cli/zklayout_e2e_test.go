package cli

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tester14 #4 end to end: serve writes Dubbo's layout, one node per
// interface (/airnode/demo.Echo/providers holds the providers of group a
// and of group b, version 2.0, each naming its interface and category);
// registry ls lists their service keys, follows group=*, and points a
// key with no provider at the others; list --explain finds group a's
// provider; a call of a group=* reference reaches a provider and leaves
// no "*" node behind.
func TestT14_4_RegistryLsAndExplainOnDubboLayout(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	reg := zks.URL("session.timeout=4s")
	a := serveWith(t, "127.0.0.1:0", reg, "-p", "group=a")
	b := serveWith(t, "127.0.0.1:0", reg, "-p", "group=b", "-p", "version=2.0")
	raw := zkClient(t, zks)
	waitZK(t, raw, "both providers registered", 10*time.Second, func(l []string) bool {
		return hasAddr(l, a.addr) && hasAddr(l, b.addr)
	})
	entries, err := zkProviders(t, raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		q, _ := url.ParseQuery(e[strings.Index(e, "?")+1:])
		if q.Get("interface") != "demo.Echo" || q.Get("category") != "providers" || q.Get("side") != "provider" || q.Get("group") == "" {
			t.Errorf("entry %s lacks Dubbo's interface/category/side/group", e)
		}
	}

	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", reg)
	if code != 0 || !regexp.MustCompile(`(?m)^a/demo\.Echo\s+\(1 provider\)$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^b/demo\.Echo:2\.0\s+\(1 provider\)$`).MatchString(out) {
		t.Errorf("registry ls: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	code, out, _ = airnode(t, nil, "registry", "ls", "--registry", reg, "demo.Echo?group=*&version=*")
	if code != 0 || !strings.Contains(out, a.addr) || !strings.Contains(out, b.addr) {
		t.Errorf("registry ls 'demo.Echo?group=*&version=*': exit %d:\n%s", code, out)
	}
	code, out, _ = airnode(t, nil, "registry", "ls", "--registry", reg, "demo.Echo")
	if code != 0 || !strings.Contains(out, "demo.Echo  (0 providers)") || !strings.Contains(out, "registered in another group or version: a/demo.Echo, b/demo.Echo:2.0") {
		t.Errorf("registry ls demo.Echo:\n%s", out)
	}
	r := runCommand(t, 20*time.Second, []string{"AIRNODE_REGISTRY=" + reg}, "list", "--explain", "demo.Echo?group=a")
	if r.code != 0 || !strings.Contains(r.stdout, "providers  1 in ") {
		t.Errorf("list --explain 'demo.Echo?group=a': exit %d, stderr %q:\n%s", r.code, r.stderr, r.stdout)
	}

	r = call(t, []string{"AIRNODE_REGISTRY=" + reg}, "demo.Echo?group=*&version=*", "Echo", `"hi"`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"hi"` {
		t.Errorf("call 'demo.Echo?group=*&version=*': exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	roots, _, err := raw.Children("/airnode")
	if err != nil || len(roots) != 1 || roots[0] != "demo.Echo" {
		t.Errorf("/airnode holds %v (%v); want demo.Echo alone (no node per service key, no '*' node)", roots, err)
	}
}

package cli

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// tester71 #7: Dubbo 2.7/3's governance rules in the ZooKeeper config
// center (/dubbo/config/dubbo/demo.Echo.configurators) went unwarned, and
// `registry ls` never mentioned rules. Now `airnode call` warns of them at
// its subscription (one line for both places: a one-shot), and `registry ls` (text and --json) lists both the
// Dubbo 2.6 rules node (with its count) and the config center's rule.
func TestT71_7_ConfigCenterRulesInCallAndLs(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	registerVersions(t, zks, "t71", 1)
	c := zkClient(t, zks)
	rule := url.QueryEscape("override://127.0.0.1:25001/demo.Echo?category=configurators&disabled=true&dynamic=false&enabled=true")
	for _, n := range []string{"/t71/demo.Echo/configurators", "/t71/demo.Echo/configurators/" + rule,
		"/t71/config", "/t71/config/dubbo", "/t71/config/dubbo/demo.Echo.configurators", "/t71/config/dubbo/other.Svc.configurators"} {
		if _, err := c.Create(n, []byte("enabled: true\n"), 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	reg := zks.URL("root=/t71&session.timeout=10s")

	// a one-shot call says the rules of both places in one line (tester82 #9)
	r := runCommand(t, 30*time.Second, nil, "call", "--registry", reg, "--timeout", "300ms", "demo.Echo?version=0.0", "Info")
	if n := strings.Count(r.stderr, "not applied by airnode"); n != 1 ||
		!strings.Contains(r.stderr, "Dubbo Admin rules are not applied by airnode") ||
		!strings.Contains(r.stderr, "rules=/t71/demo.Echo/configurators,/t71/config/dubbo/demo.Echo.configurators") || strings.Contains(r.stderr, "other.Svc") {
		t.Fatalf("call: exit %d, stderr %q; want one warning naming the rules node and demo.Echo's config-center rule", r.code, r.stderr)
	}

	r = runCommand(t, 30*time.Second, nil, "registry", "ls", "--registry", reg, "demo.Echo:0.0")
	want := "  Dubbo Admin rules airnode does not apply (overrides, routes): /t71/demo.Echo/configurators (1 rule), /t71/config/dubbo/demo.Echo.configurators\n"
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("registry ls: exit %d, stdout %q, stderr %q; want the line %q", r.code, r.stdout, r.stderr, want)
	}
	r = runCommand(t, 30*time.Second, nil, "registry", "ls", "--json", "--registry", reg, "demo.Echo:0.0")
	var out struct {
		Services []struct {
			Service string   `json:"service"`
			Rules   []string `json:"rules"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Services) != 1 {
		t.Fatalf("registry ls --json: exit %d, %v, stdout %q", r.code, err, r.stdout)
	}
	if got := strings.Join(out.Services[0].Rules, " "); got != "/t71/demo.Echo/configurators /t71/config/dubbo/demo.Echo.configurators" {
		t.Fatalf("registry ls --json rules = %q", got)
	}
}

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// fix-w leftover: a consumer's registry entry carries the default
// application (the executable's base name, "airnode" here) when its URL
// names none, but its subscription did not, so Dubbo Admin's
// application-level rules for that name (airnode.configurators) went
// unwarned while the same rules under an explicit application=... were
// warned of. The subscription now names the application its entry does.
func TestT77_DefaultApplicationRulesAreWarnedAbout(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	registerVersions(t, zks, "t77app", 1)
	c := zkClient(t, zks)
	for _, n := range []string{"/t77app/config", "/t77app/config/dubbo", "/t77app/config/dubbo/airnode.configurators", "/t77app/config/dubbo/shop.configurators"} {
		if _, err := c.Create(n, []byte("enabled: true\n"), 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	reg := zks.URL("root=/t77app&session.timeout=10s")
	// --timeout bounds the ZooKeeper session and subscription too: 300 ms
	// ran out before the session under CI's load (load 11); with no
	// provider listed the call fails as soon as the subscription answers.
	r := runCommand(t, 30*time.Second, nil, "call", "--registry", reg, "--timeout", "5s", "demo.Echo?version=0.0", "Info")
	if !strings.Contains(r.stderr, "rules=/t77app/config/dubbo/airnode.configurators") || strings.Contains(r.stderr, "shop.configurators") {
		t.Fatalf("call with no application key: exit %d, stderr %q; want the warning of airnode.configurators (the default application's rule) only", r.code, r.stderr)
	}
	r = runCommand(t, 30*time.Second, nil, "call", "--registry", reg, "--timeout", "5s", "demo.Echo?version=0.0&application=shop", "Info")
	if !strings.Contains(r.stderr, "rules=/t77app/config/dubbo/shop.configurators") || strings.Contains(r.stderr, "airnode.configurators") {
		t.Fatalf("call with application=shop: exit %d, stderr %q; want the warning of shop.configurators only", r.code, r.stderr)
	}
}

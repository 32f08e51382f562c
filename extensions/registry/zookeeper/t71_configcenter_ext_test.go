package zookeeper_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// Tester71 #7: Dubbo Admin for Dubbo 2.7/3, with ZooKeeper as the config
// center, writes its governance rules under /dubbo/config/dubbo/ as
// <service key>.configurators, .condition-router and <app>.tag-router;
// only the 2.6 layout (configurators/ under the interface) was warned of.
// A consumer's first subscription now warns of the config center's rules
// for its interface (every key form Dubbo and Dubbo Admin write) and its
// application, naming each, and not of another interface's rules.
func TestT71_7_ConfigCenterRulesAreWarnedAbout(t *testing.T) {
	raw := rawClient(t)
	for _, n := range []string{"/t71c", "/t71c/config", "/t71c/config/dubbo"} {
		if _, err := raw.Create(n, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	rules := []string{
		"demo.Echo.configurators",       // Dubbo Admin 0.1: the interface
		"demo.Echo::.condition-router",  // Dubbo 2.7.x / Admin: interface:version:group
		"demo.Echo:1.0:g.configurators", // with version and group
		"g*demo.Echo:1.0.configurators", // Dubbo 2.7.0's encoded service key
		"shop.tag-router",               // the consumer's application
		"demo.EchoTwo.configurators",    // another interface: not this one's
		"other.Svc::.condition-router",  // another interface
		"dubbo.properties",              // not a rule
	}
	body := []byte("configVersion: v2.7\nscope: service\nkey: demo.Echo\nenabled: true\nconfigs:\n- side: provider\n  parameters:\n    disabled: true\n")
	for _, r := range rules {
		if _, err := raw.Create("/t71c/config/dubbo/"+r, body, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	b := zookeeper.Builder{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	c, err := b.Build(spi.MustParse(server.URL("root=/t71c&session.timeout=5s")))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.Subscribe(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&application=shop"), func([]spi.URL) {})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	out := logs.String()
	want := `rules=demo.Echo.configurators,demo.Echo:1.0:g.configurators,demo.Echo::.condition-router,g*demo.Echo:1.0.configurators,shop.tag-router`
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "Dubbo 2.7/3 governance rules in the config center under /t71c/config/dubbo are not applied by airnode") ||
		!strings.Contains(out, want) {
		t.Fatalf("no warning naming this interface's config-center rules (%s) in:\n%s", want, out)
	}
	if strings.Contains(out, "EchoTwo") || strings.Contains(out, "other.Svc") || strings.Contains(out, "dubbo.properties") {
		t.Fatalf("the warning names rules of other interfaces or a non-rule:\n%s", out)
	}

	// an interface with no rule anywhere: no warning
	logs.Reset()
	s2, err := c.Subscribe(ctx(t), spi.MustParse("airnode://127.0.0.1/demo.Quiet?side=consumer"), func([]spi.URL) {})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if strings.Contains(logs.String(), "not applied by airnode") {
		t.Fatalf("a warning for an interface without rules:\n%s", logs.String())
	}
}

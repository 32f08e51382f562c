package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// p2cKeys stands in for a plugin balancer: a name and its own keys.
type p2cKeys struct{}

func (p2cKeys) Name() string                           { return "acme.p2c" }
func (p2cKeys) Build(spi.URL) (spi.LoadBalance, error) { return nil, nil }
func (p2cKeys) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "candidates compared per pick"}}
}

// tester9 finding 10: list --explain of a URL choosing a plugin balancer
// lists the plugin's own keys, not consistenthash's.
func TestListExplainShowsThePluginBalancersKeys(t *testing.T) {
	cat := bundle.Catalogs()
	if err := cat.LoadBalance.Register(p2cKeys{}, extension.Origin("/bin/plug")); err != nil {
		t.Fatal(err)
	}
	explain := func(raw string) string {
		t.Helper()
		var out, errw bytes.Buffer
		if err := runExplain(context.Background(), &out, &errw, "text", cat, config.DefaultConfig(), false, "", raw, ""); err != nil {
			t.Fatalf("%s: %v\n%s", raw, err, errw.String())
		}
		return out.String()
	}
	out := explain("airnode://127.0.0.1:20880/demo.Echo?loadbalance=acme.p2c&methods.Echo.p2c.choices=3")
	if strings.Contains(out, "hash.arguments") || strings.Contains(out, "hash.nodes") {
		t.Errorf("consistenthash's keys shown for acme.p2c:\n%s", out)
	}
	for _, re := range []string{
		`(?m)^p2c\.choices\s+service\s+2\s+default \(acme\.p2c\)$`,
		`(?m)^p2c\.choices\s+method Echo\s+3\s+SERVICE_URL query \(methods\.Echo\.p2c\.choices\)$`,
		`(?m)^p2c\.choices\s+candidates compared per pick \(loadbalance acme\.p2c\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no line %s in:\n%s", re, out)
		}
	}
	if out := explain("airnode://127.0.0.1:20880/demo.Echo?loadbalance=consistenthash"); !strings.Contains(out, "hash.arguments") || strings.Contains(out, "p2c.choices") {
		t.Errorf("consistenthash: want its keys, not the plugin's:\n%s", out)
	}
}

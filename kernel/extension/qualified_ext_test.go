package extension_test

import (
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

type namedLB string

func (n namedLB) Name() string                         { return string(n) }
func (namedLB) Build(spi.URL) (spi.LoadBalance, error) { return nil, nil }

// tester9: a plugin's own name ("p2c") when plugins.yaml names it
// "acme.p2c" suggests the qualified name, though it is 5 edits away.
func TestUnknownSuggestsTheQualifiedPluginName(t *testing.T) {
	c := extensiontest.Catalogs()
	if err := c.LoadBalance.Register(namedLB("acme.p2c"), extension.Origin("/bin/plug")); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.LoadBalance.Select(spi.MustParse("airnode://h/x?loadbalance=p2c"), "")
	want := `unknown loadbalance "p2c" (available: acme.p2c, consistenthash, leastactive, random, roundrobin, shortestresponse); did you mean "acme.p2c"?`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
}

package kernel

import (
	"slices"
	"testing"

	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// zoneLB is a balancer that reads "zone" from provider URLs.
type zoneLB struct{ extensiontest.LoadBalance }

func (zoneLB) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "zone", Type: spi.KeyTypeString, Doc: "the provider's zone", FromProviders: true}}
}

// tester64 finding 5: a reference that sets a key its balancer reads
// from provider URLs (spi.KeyDoc.FromProviders) overrides every
// provider's value, silently. Refer (and list --explain, from the same
// ReferWarnings) now warns of it, naming the balancer; a reference
// whose balancer does not read the key gets no such warning.
func TestT64_FromProvidersKeyOnReferenceWarns(t *testing.T) {
	c := testCatalogs(t)
	if err := c.LoadBalance.Register(&zoneLB{extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.zone"}}}, "example.com/acme"); err != nil {
		t.Fatal(err)
	}
	n := NewNode(c, WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	kinds := func(q string) []URLWarning {
		ws, err := n.ReferWarnings(spi.MustParse("airnode:///demo.Echo?" + q))
		if err != nil {
			t.Fatal(err)
		}
		return slices.DeleteFunc(ws, func(w URLWarning) bool { return w.Kind != "fromproviders" })
	}
	ws := kinds("loadbalance=acme.zone&zone=c")
	if len(ws) != 1 || ws[0].Key != "zone" || ws[0].Value != "c" ||
		ws[0].Why != "loadbalance acme.zone reads it from each provider's URL, and a reference's value overrides every provider's; give the consumer's setting a key of its own" {
		t.Errorf("zone=c beside acme.zone: %+v, want one fromproviders warning naming the balancer", ws)
	}
	if ws := kinds("loadbalance=random&zone=c"); len(ws) != 0 {
		t.Errorf("zone=c beside random: %+v, want none of kind fromproviders", ws)
	}
}

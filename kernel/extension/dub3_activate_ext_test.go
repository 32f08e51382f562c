package extension_test

import (
	"slices"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// A PerMethod filter's key set for some method activates the service's
// chain by the one rule of spi.URL.MethodsSetting, the methods
// MethodParam gives a value to: Dubbo's "<m>.<key>" counts for m in the
// URL's "methods" or, when it lists none, for an exported Go method name
// only. "sleep.executes=1" on a URL without "methods" activated
// executelimit before, though no Go method reads it (the limit applied to
// no call) and failover, the balancers and the kernel's per-method
// strategies all took it for no method's key.
func TestDub3_PerMethodActivationFollowsMethodsSetting(t *testing.T) {
	c := extensiontest.Catalogs()
	for q, want := range map[string]bool{
		"executes=2":                                true,
		"Sleep.executes=1":                          true,
		"methods.Sleep.executes=1":                  true,
		"methods.sleep.executes=1":                  true, // "methods.<m>." names a method whatever its case
		"sleep.executes=1":                          false,
		"methods=sleep,Echo&sleep.executes=1":       true, // a listed method, another language's
		"methods=Echo&Sleep.executes=1":             false,
		"heartbeat.executes=1&connect.executes=1":   false,
		"methods.Sleep.x.executes=1&A.b.executes=1": false,
	} {
		u := spi.MustParse("a://h/x?" + q)
		names, err := extension.FilterNames(c.Filter, u, spi.Provider, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(names, "executelimit"); got != want {
			t.Errorf("%s: executelimit in the service's chain = %v, want %v (chain %v)", q, got, want, names)
		}
		if _, service := u.Param("executes"); !service && (len(u.MethodsSetting("executes")) > 0) != want {
			t.Errorf("%s: MethodsSetting(executes) = %q, the chain says %v", q, u.MethodsSetting("executes"), want)
		}
	}
}

// tester64: a key-activated filter was in the chain for key=false too
// (only the key's presence counted), where Dubbo leaves it out. Now
// "false", in any case, at service or method level, does not activate;
// any other value does ("0" and "" included: Build reads the value).
func TestT64_KeyFalseDoesNotActivate(t *testing.T) {
	c := extensiontest.Catalogs()
	if err := c.Filter.Register(&extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "acme.reqid",
		Act: spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "acme.reqid"}}}, "example.com/acme"); err != nil {
		t.Fatal(err)
	}
	// a filter whose key is an int stays in the chain for its Build to
	// refuse "false" ("actives=false": want an integer)
	if err := c.Filter.Register(&intKeyed{extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "acme.limit",
		Act: spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "acme.limit"}}}}, "example.com/acme"); err != nil {
		t.Fatal(err)
	}
	if names, _ := extension.FilterNames(c.Filter, spi.MustParse("a://h/x?acme.limit=false"), spi.Provider, ""); !slices.Contains(names, "acme.limit") {
		t.Errorf("acme.limit=false, an int key: chain %v, want acme.limit in it (its Build refuses the value)", names)
	}
	for q, want := range map[string]bool{
		"acme.reqid=true":                    true,
		"acme.reqid=0":                       true,
		"acme.reqid=":                        true,
		"acme.reqid=false":                   false,
		"acme.reqid=FALSE":                   false,
		"acme.reqid=false&filter=acme.reqid": true, // named explicitly
		"methods=Echo&acme.reqid=true&Echo.acme.reqid=false": false,
	} {
		names, err := extension.FilterNames(c.Filter, spi.MustParse("a://h/x?"+q), spi.Provider, "Echo")
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(names, "acme.reqid"); got != want {
			t.Errorf("%s: acme.reqid in Echo's chain = %v, want %v (chain %v)", q, got, want, names)
		}
	}
}

// intKeyed is a filter declaring its activation key an int.
type intKeyed struct{ extensiontest.Filter }

func (intKeyed) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "acme.limit", Type: spi.KeyTypeInt, Doc: "a limit"}}
}

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

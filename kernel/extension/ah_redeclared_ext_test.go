package extension_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// The keys a running plugin's new process declares are claimed key by
// key (ClaimRedeclaredKeys): its new Secret key and a key it declared
// before without Secret and now Secret are marked; a Secret key that
// would hide another extension's key is ignored with an error naming the
// key, the plugin and the owner, the others claimed all the same. A key
// turned Secret counts as the plugin's secret from then on: an owner
// registered later without Secret is refused, as after a registration.
func TestAHRedeclaredKeysAreClaimedKeyByKey(t *testing.T) {
	c := bundled(t)
	const origin = extension.Origin("/opt/ahre")
	if err := c.Filter.Register(newT21Filter("ahre", false, "ahre.key"), origin); err != nil {
		t.Fatal(err)
	}
	errs := extension.ClaimRedeclaredKeys(extension.PointFilter, "ahre", origin, []spi.KeyDoc{
		{Key: "ahre.key", Type: spi.KeyTypeString, Secret: true},
		{Key: "accesslog", Type: spi.KeyTypeString, Secret: true},
		{Key: "ahre.pw", Type: spi.KeyTypeString, Secret: true},
	}, spi.Activation{})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `filter: "ahre" declares "accesslog" secret, a key of filter "accesslog" (bundled)`) {
		t.Errorf("ClaimRedeclaredKeys = %v; want one error, for accesslog, naming its owner", errs)
	}
	for k, want := range map[string]bool{"ahre.key": true, "ahre.pw": true, "accesslog": false} {
		if got := spi.IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%q) = %v; want %v", k, got, want)
		}
	}
	err := c.LoadBalance.Register(newT21LB("ahre2", false, "ahre.key"), t21Origin)
	if err == nil || !strings.Contains(err.Error(), `which filter "ahre" (/opt/ahre) declared secret`) {
		t.Errorf("Register of an owner of ahre.key after the plugin declared it Secret: %v", err)
	}
}

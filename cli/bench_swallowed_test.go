package cli

import (
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/spi"
)

// The swallowed filter is in bench's chain only when a cluster the
// reference may use can swallow a failure (bench4_test's failsafe run
// shows it counting; this, that it is left out otherwise).
func TestMayBeSwallowed(t *testing.T) {
	cat := bundle.Catalogs()
	for raw, want := range map[string]bool{
		"airnode://127.0.0.1:1/demo.Echo":                                                false,
		"airnode://127.0.0.1:1/demo.Echo?cluster=failfast":                               false,
		"airnode://127.0.0.1:1/demo.Echo?cluster=forking":                                false,
		"airnode://127.0.0.1:1/demo.Echo?cluster=failsafe":                               true,
		"airnode://127.0.0.1:1/demo.Echo?methods.Payload.cluster=failsafe":               true,
		"airnode://127.0.0.1:1/demo.Echo?cluster=failsafe&methods.Echo.cluster=failover": true,
		"airnode://127.0.0.1:1/demo.Echo?cluster=acme.mine":                              true,
	} {
		u, err := spi.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := mayBeSwallowed(cat, u); got != want {
			t.Errorf("mayBeSwallowed(%s) = %v, want %v", raw, got, want)
		}
	}
}

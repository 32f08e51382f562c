package directory_test

import (
	"fmt"
	"slices"
	"testing"
)

// Providers of another group or version are left out, and Ignored says
// which and why (tester7: "demo.Echo" with only g/demo.Echo:1.0 registered
// gave a bare "no provider available"), at most three lines and a count.
func TestIgnoredNamesProvidersOfAnotherGroupOrVersion(t *testing.T) {
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider&group=g&version=1.0")
	register(t, reg, "dubbo://127.0.0.1:2/demo.Echo?side=provider&group=g&version=1.0") // another protocol: not listed
	start(t, d)
	waitLen(t, d, 0)
	want := []string{"127.0.0.1:1 is in group g, version 1.0 (the reference asks for no group, no version)"}
	if ig := d.Ignored(); !slices.Equal(ig, want) {
		t.Fatalf("Ignored = %q, want %q", ig, want)
	}

	// more than three: three lines and a count; a provider of the
	// reference's own key leaves the others out of the list
	reg2, d2, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer&version=2.0")
	for port := 1; port <= 5; port++ {
		register(t, reg2, fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?side=provider&group=g%d&version=1.0", port, port))
	}
	register(t, reg2, "airnode://127.0.0.1:6/demo.Echo?side=provider&group=g1&version=1.0&weight=5") // g1's second
	register(t, reg2, "airnode://127.0.0.1:7/other.Svc?side=provider&version=1.0")                   // another interface
	start(t, d2)
	waitLen(t, d2, 0)
	ig := d2.Ignored()
	if len(ig) != 4 || ig[3] != "and 3 more in another group or version" {
		t.Fatalf("Ignored = %q; want three lines and a count", ig)
	}
	for _, l := range ig[:3] {
		var port, g int
		if _, err := fmt.Sscanf(l, "127.0.0.1:%d is in group g%d, version 1.0 (the reference asks for no group, version 2.0)", &port, &g); err != nil {
			t.Errorf("line %q: %v", l, err)
		}
	}
	register(t, reg2, "airnode://127.0.0.1:9/demo.Echo?side=provider&version=2.0")
	waitLen(t, d2, 1)
	if ig := d2.Ignored(); ig != nil {
		t.Fatalf("with a provider of its own: Ignored = %q", ig)
	}

	// the group the reference asks for: nothing left out
	reg3, d3, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer&group=g&version=1.0")
	register(t, reg3, "airnode://127.0.0.1:1/demo.Echo?side=provider&group=g&version=1.0")
	start(t, d3)
	waitLen(t, d3, 1)
	if ig := d3.Ignored(); ig != nil {
		t.Fatalf("Ignored = %q", ig)
	}
}

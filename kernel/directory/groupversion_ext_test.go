package directory_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
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

// Dubbo's any ("*") and multi-group ("a,b") references are refused with
// a message saying why and what to write (tester10 #6: they were asked
// for literally and matched nothing, while the messages said "any
// group"); Start refuses such a consumer URL too.
func TestCheckGroupVersionRefusesAnyAndLists(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"airnode:///t.G?group=*", "group=*: airnode does not support Dubbo's any-group reference"},
		{"airnode:///t.G?version=*", "version=*: airnode does not support Dubbo's any-version reference"},
		{"airnode:///t.G?group=a,b", "group=a,b: airnode does not support Dubbo's multi-group reference (a list or a pattern): a registry is asked for the providers of one service key (a,b/t.G); make one reference per group (group=a)"},
		{"airnode:///t.G?group=a*", "make one reference per group (group=a)"},
		{"airnode:///t.G?group=,", "(group=NAME)"},
		{"airnode:///t.G?version=1.0,2.0", "version=1.0,2.0: airnode does not support Dubbo's multi-version reference"},
	} {
		err := directory.CheckGroupVersion(spi.MustParse(c.url))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.url, err, c.want)
		}
	}
	for _, ok := range []string{"airnode:///t.G", "airnode:///t.G?group=a&version=1.0"} {
		if err := directory.CheckGroupVersion(spi.MustParse(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	_, d, _ := setup(t, "airnode://127.0.0.1/t.G?side=consumer&group=*")
	if err := d.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "any-group") {
		t.Fatalf("Start with group=*: %v", err)
	}
}

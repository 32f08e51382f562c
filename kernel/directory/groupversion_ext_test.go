package directory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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

// A pattern or an empty item in a group or version list is refused
// (CheckGroupVersion, and Start); one value, a list and "*" alone are
// accepted, the last two as several service keys (Multi).
func TestCheckGroupVersionRefusesPatternsAndEmptyItems(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"airnode:///t.G?group=a*", `group=a*: "a*" is a pattern; group takes one value, a comma-separated list (group=a,b) or * alone for any`},
		{"airnode:///t.G?group=a,*", `"*" is a pattern`},
		{"airnode:///t.G?group=a,,b", "group=a,,b: an empty item in the list (want group=a,b, or group=* for any)"},
		{"airnode:///t.G?version=1.*", `version=1.*: "1.*" is a pattern`},
	} {
		err := directory.CheckGroupVersion(spi.MustParse(c.url))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.url, err, c.want)
		}
	}
	for ok, multi := range map[string]bool{"airnode:///t.G": false, "airnode:///t.G?group=a&version=1.0": false,
		"airnode:///t.G?group=*": true, "airnode:///t.G?version=*": true, "airnode:///t.G?group=a,b": true, "airnode:///t.G?group=a,%20a": false} {
		if err := directory.CheckGroupVersion(spi.MustParse(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
		if got := directory.Multi(spi.MustParse(ok)); got != multi {
			t.Errorf("Multi(%s) = %v, want %v", ok, got, multi)
		}
	}
	_, d, _ := setup(t, "airnode://127.0.0.1/t.G?side=consumer&group=a*")
	if err := d.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "is a pattern") {
		t.Fatalf("Start with group=a*: %v", err)
	}
}

// addresses returns the sorted addresses of invs.
func addresses(invs []spi.Invoker) []string {
	var out []string
	for _, inv := range invs {
		out = append(out, inv.URL().Address())
	}
	slices.Sort(out)
	return out
}

// waitAddresses waits until d lists exactly want (sorted).
func waitAddresses(t *testing.T, d *directory.Directory, want ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * directory.RescanInterval)
	for {
		got := addresses(d.List(nil))
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("List = %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestGroupListAndAnyGroup: tester10 #6, Dubbo's group=a,b and group=*
// matched no provider. A list takes the providers of its groups, from
// Start on and as they come and go; * takes every group's and no
// group's, also of a group registered after Start (within
// RescanInterval), and not another interface's; version=* likewise.
func TestGroupListAndAnyGroup(t *testing.T) {
	reg, list, _ := setup(t, "airnode://127.0.0.1/t.G?side=consumer&group=a,b")
	register(t, reg, "airnode://127.0.0.1:1/t.G?side=provider&group=a")
	register(t, reg, "airnode://127.0.0.1:2/t.G?side=provider&group=b")
	register(t, reg, "airnode://127.0.0.1:3/t.G?side=provider&group=c")
	register(t, reg, "airnode://127.0.0.1:4/t.G?side=provider")
	start(t, list)
	waitAddresses(t, list, "127.0.0.1:1", "127.0.0.1:2") // at Start, not eventually
	b2 := register(t, reg, "airnode://127.0.0.1:5/t.G?side=provider&group=b")
	waitAddresses(t, list, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:5")
	if err := reg.Unregister(context.Background(), b2); err != nil {
		t.Fatal(err)
	}
	waitAddresses(t, list, "127.0.0.1:1", "127.0.0.1:2")

	anyD := directory.New(spi.MustParse("airnode://127.0.0.1/t.G?side=consumer&group=*"), reg, "memory://", (&factory{}).newInvoker, nil)
	t.Cleanup(func() { _ = anyD.Close() })
	register(t, reg, "airnode://127.0.0.1:6/other.Svc?side=provider&group=a")
	register(t, reg, "airnode://127.0.0.1:7/t.G?side=provider&group=a&version=1.0") // another version
	start(t, anyD)
	waitAddresses(t, anyD, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4")
	register(t, reg, "airnode://127.0.0.1:8/t.G?side=provider&group=new")
	waitAddresses(t, anyD, "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4", "127.0.0.1:8")

	anyV := directory.New(spi.MustParse("airnode://127.0.0.1/t.G?side=consumer&group=a&version=*"), reg, "memory://", (&factory{}).newInvoker, nil)
	t.Cleanup(func() { _ = anyV.Close() })
	start(t, anyV)
	waitAddresses(t, anyV, "127.0.0.1:1", "127.0.0.1:7")
	if err := anyV.Close(); err != nil {
		t.Fatal(err)
	}
	if err := anyV.Close(); err != nil {
		t.Fatal(err)
	}
}

// A registry that cannot list its service keys cannot serve "*": Start
// says so and what to write instead.
func TestAnyGroupNeedsAListingRegistry(t *testing.T) {
	reg := noServices{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/t.G?side=consumer&group=*"), reg, "acme://", (&factory{}).newInvoker, nil)
	t.Cleanup(func() { _ = d.Close() })
	err := d.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "group=*: registry acme:// cannot list its service keys, which * needs: name the groups and versions (group=a,b)") {
		t.Fatalf("Start: %v", err)
	}
}

// noServices is a registry whose Services is not supported.
type noServices struct{ spi.Registry }

func (noServices) Services(context.Context) ([]string, error) { return nil, spi.ErrNotSupported }

// A directory of several service keys whose registry never pushes: Start
// ends with ctx and stops every subscription it made.
func TestMultiStartTimesOutAndUndoes(t *testing.T) {
	stops.Store(0)
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?group=a,b"), silent{}, "silent://", (&factory{}).newInvoker, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start = %v, want deadline exceeded", err)
	}
	if stops.Load() != 2 {
		t.Fatalf("subscriptions stopped %d times, want 2", stops.Load())
	}
	_ = d.Close()
	if stops.Load() != 2 {
		t.Fatalf("Close stopped them again: %d", stops.Load())
	}
}

// Providers of another protocol (a Dubbo provider's dubbo:// entry in a
// shared ZooKeeper tree) are skipped, and Ignored says how many and why,
// naming the protocol, where "no provider available" gave no reason
// (tester51 finding 4); a provider of the reference's protocol is listed
// and the line stays.
func TestIgnoredNamesProvidersOfAnotherProtocol(t *testing.T) {
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	register(t, reg, "dubbo://127.0.0.1:20880/demo.Echo?side=provider&application=demo-provider&dubbo=2.0.2")
	start(t, d)
	waitLen(t, d, 0)
	want := []string{"1 provider listed but skipped: 127.0.0.1:20880 speaks protocol dubbo, not airnode (the reference calls airnode:// providers only; a Dubbo provider needs a Dubbo consumer)"}
	if ig := d.Ignored(); !slices.Equal(ig, want) {
		t.Fatalf("Ignored = %q, want %q", ig, want)
	}
	register(t, reg, "dubbo://127.0.0.1:20881/demo.Echo?side=provider")
	register(t, reg, "tri://127.0.0.1:50051/demo.Echo?side=provider")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
	waitLen(t, d, 1)
	want = []string{
		"1 provider listed but skipped: 127.0.0.1:50051 speaks protocol tri, not airnode (the reference calls airnode:// providers only)",
		"2 providers listed but skipped: 127.0.0.1:20880, 127.0.0.1:20881 speak protocol dubbo, not airnode (the reference calls airnode:// providers only; a Dubbo provider needs a Dubbo consumer)",
	}
	ig := slices.Clone(d.Ignored())
	slices.Sort(ig)
	if !slices.Equal(ig, want) {
		t.Fatalf("Ignored = %q, want %q", ig, want)
	}
}

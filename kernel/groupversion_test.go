package kernel

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// Through a file registry, calling demo.Echo when only g/demo.Echo:1.0 is
// registered says which provider was left out and why (tester7: a bare
// "no provider available"); once the reference names the group and
// version the call goes through.
func TestNoProviderNamesOtherGroupAndVersionThroughARegistry(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("file://" + t.TempDir())
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("g", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=g&version=1.0"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })

	bare, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?timeout=2s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bare.Invoke(ctxT(t), "Echo", 1)
	want := "left out: " + e.URL().Address() + " is in group g, version 1.0 (the reference asks for no group, no version)"
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), want) {
		t.Fatalf("call of demo.Echo: %v; want SERVICE_NOT_FOUND with %q", err, want)
	}

	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?group=g&version=1.0&timeout=2s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider listed", func() bool { return len(r.Providers()) == 1 })
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("call of g/demo.Echo:1.0: %v, %v", v, err)
	}
}

// TestCallsReachEveryGroupOfAListOrStar: tester10 #6, group=*,
// version=* and group=a,b (Dubbo's any and multi-group references) got
// "no provider available" though providers of the interface were
// registered. Over real TCP through a memory registry: group=* calls the
// providers of every group and of none, group=a,b those of a and b only,
// each call sent under its provider's service key (the provider finds
// its service); a direct reference with several groups, and a pattern,
// are refused.
func TestCallsReachEveryGroupOfAListOrStar(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://groups")
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	t.Cleanup(func() { _ = p.Close() })
	var direct string
	for _, g := range []string{"", "a", "b", "c"} {
		q := ""
		if g != "" {
			q = "?group=" + g
		}
		e, err := p.Export(ctxT(t), demo.New("g"+g, 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"+q))
		if err != nil {
			t.Fatal(err)
		}
		direct = e.URL().Address()
	}
	c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	for q, want := range map[string][]string{
		"group=*":           {"g", "ga", "gb", "gc"},
		"group=a,b":         {"ga", "gb"},
		"group=a,%20c":      {"ga", "gc"},
		"version=*":         {"g"},
		"group=*&version=*": {"g", "ga", "gb", "gc"},
	} {
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?timeout=2s&loadbalance=roundrobin&"+q), spi.URL{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		// the memory registry's list reaches the directory after Refer
		// returns, and a provider still connecting is skipped (failover):
		// calls made before every group is listed and connected may all
		// miss one on a loaded machine
		eventually(t, q+": every provider listed and connected", func() bool {
			ps := r.Providers()
			for _, inv := range ps {
				if !inv.Available() {
					return false
				}
			}
			return len(ps) == len(want)
		})
		seen := map[string]bool{}
		for range 8 * len(want) {
			var info demo.Info
			if err := r.Call(ctxT(t), "Info", nil, &info); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			seen[info.Node] = true
		}
		var got []string
		for n := range seen {
			got = append(got, n)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: calls reached %v, want %v", q, got, want)
		}
		_ = r.Close()
	}
	for q, want := range map[string]string{
		"airnode://" + direct + "/demo.Echo?group=*": "several groups or versions (a list, or *) need a registry",
		"airnode:///demo.Echo?group=a*":              `"a*" is a pattern`,
	} {
		r, err := c.Refer(ctxT(t), spi.MustParse(q), spi.URL{})
		if err == nil {
			_ = r.Close()
			t.Errorf("Refer %s succeeded; want it refused", q)
			continue
		}
		if !strings.HasPrefix(err.Error(), "kernel: refer demo.Echo: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("Refer %s: %v; want %q", q, err, want)
		}
	}
}

// Through a file registry, group=* also takes a group whose first
// provider registers after Refer: the directory finds its service key
// within directory.RescanInterval and calls reach it.
func TestAnyGroupTakesALaterGroupThroughAFileRegistry(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("file://" + t.TempDir())
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Export(ctxT(t), demo.New("ga", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=a")); err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?group=*&timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var info demo.Info
	if err := r.Call(ctxT(t), "Info", nil, &info); err != nil || info.Node != "ga" {
		t.Fatalf("first call: %v, %v", info.Node, err)
	}
	if _, err := p.Export(ctxT(t), demo.New("gb", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=b")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * directory.RescanInterval) // a rescan, then the subscription's first push
	for len(r.Providers()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("group b's provider not listed after %v: %d providers", 5*directory.RescanInterval, len(r.Providers()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	seen := map[string]bool{}
	for range 20 {
		if err := r.Call(ctxT(t), "Info", nil, &info); err != nil {
			t.Fatal(err)
		}
		seen[info.Node] = true
	}
	if !seen["ga"] || !seen["gb"] {
		t.Fatalf("calls reached %v, want ga and gb", seen)
	}
}

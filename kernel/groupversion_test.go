package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
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

// TestReferRefusesAnyAndMultiGroup: tester10 #6, a reference with group=*,
// version=* or group=a,b got "no provider available" though providers of
// the interface were registered; Refer now refuses it, saying why.
func TestReferRefusesAnyAndMultiGroup(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("file://" + t.TempDir())
	c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = c.Close() })
	for _, q := range []string{"group=*", "version=*", "group=*&version=*", "group=a,b"} {
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///t.G?"+q), spi.URL{})
		if err == nil {
			_ = r.Close()
			t.Errorf("Refer ?%s succeeded; want it refused", q)
			continue
		}
		if !strings.HasPrefix(err.Error(), "kernel: refer t.G: ") || !strings.Contains(err.Error(), "airnode does not support Dubbo's") {
			t.Errorf("Refer ?%s: %v", q, err)
		}
	}
}

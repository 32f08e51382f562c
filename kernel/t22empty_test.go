package kernel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// TestT22_EmptyProtection (tester22 finding 1, end to end over real
// connections): the registry loses the entries of three providers that
// stay up and connected (their registry session lost, or a ZooKeeper
// refilling). The reference with the default keeps calling them, with
// one Warn; a reference with registry.empty.protection=false fails
// SERVICE_NOT_FOUND as before. A kept provider that shuts down (its
// go-away, then its connection closing) leaves the protected reference.
func TestT22_EmptyProtection(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t22-empty")
	var exps []*Exporter
	var provs []*Node
	for i := range 3 {
		p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
		t.Cleanup(func() { _ = p.Close() })
		e, err := p.Export(ctx, demo.New(fmt.Sprint("p", i), 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
		if err != nil {
			t.Fatal(err)
		}
		exps, provs = append(exps, e), append(provs, p)
	}
	c, logs := faultNode(t, cat, WithRegistry(reg))
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	off, err := c.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s&registry.empty.protection=false"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	waitProviders := func(r *Reference, n int, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(r.Providers()) != n {
			if time.Now().After(deadline) {
				t.Fatalf("after 10s %d providers, want %d: %s", len(r.Providers()), n, what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitProviders(ref, 3, "all connected")
	waitProviders(off, 3, "all connected")

	for _, e := range exps {
		if err := e.unregister(ctx, "test"); err != nil {
			t.Fatal(err)
		}
	}
	waitProviders(off, 0, "protection off: the reference empties")
	_, err = off.Invoke(ctx, "Echo", "x")
	if !errors.Is(err, spi.ErrServiceNotFound) && spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("protection off: call = %v, want SERVICE_NOT_FOUND", err)
	}
	for i := range 20 {
		if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatalf("call %d with empty protection: %v", i, err)
		}
	}
	// The memory registry pushes each Unregister: the first (1 of 3)
	// looks like a rolling restart's and applies at once; the second
	// makes 2 of 3 within seconds (damped); the third empties the list
	// (empty protection keeps the 2).
	if n := len(ref.Providers()); n != 2 {
		t.Fatalf("%d providers kept, want 2", n)
	}
	kept := ref.Kept()
	if len(kept) != 2 || kept[0].Reason != "kept by empty protection" {
		t.Fatalf("Kept() = %v, want 2 kept by empty protection", kept)
	}
	if w := logs.find("directory: registry memory://t22-empty dropped 2 of the 3 connected providers"); len(w) != 2 {
		t.Fatalf("%d damping warnings, want 2 (one per reference: off damps too)", len(w))
	}
	// The Warn waits for the kept providers' probe answers (the next
	// check, within about 0.5 s): a provider announcing its shutdown would
	// be known as draining by then, and get no Warn (rd1_announced_test).
	for deadline := time.Now().Add(5 * time.Second); len(logs.find("directory: registry memory://t22-empty lists no provider of demo.Echo")) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if w := logs.find("directory: registry memory://t22-empty lists no provider of demo.Echo; keeping the 2 still connected"); len(w) != 1 {
		t.Fatalf("%d empty-protection warnings, want 1", len(w))
	}

	// A kept provider shuts down: its go-away and closed connection take
	// it out; the other still answers.
	for i, e := range exps {
		if e.URL().Address() == kept[0].Provider.Address() {
			if err := provs[i].Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitProviders(ref, 1, "the provider that shut down leaves")
	deadline := time.Now().Add(10 * time.Second)
	for len(ref.dir.All()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the closed provider's invoker is still in the directory: %d", len(ref.dir.All()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 10 {
		if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatalf("call %d after one kept provider left: %v", i, err)
		}
	}
}

// A provider kept by empty protection that unexports the service while
// its node runs on (its connection stays up for its other services)
// answers SERVICE_NOT_FOUND: after that answer the reference drops it
// within a second (directory.NotServing), instead of keeping calling a
// provider that says it does not serve the service for as long as the
// registry lists nobody.
func TestT22_EmptyProtectionDropsAProviderThatUnexported(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://t22-unexported")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	// a second service on the same address keeps the connection's node serving
	if _, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?group=other")); err != nil {
		t.Fatal(err)
	}
	c, _ := faultNode(t, cat, WithRegistry(reg))
	ref := referListing(t, c, "airnode:///demo.Echo?timeout=2s", 1)
	if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	if err := e.Unexport(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ref.Kept()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s Kept() = %v, want the unexported provider kept by empty protection", ref.Kept())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err = ref.Invoke(ctx, "Echo", "x")
	if spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("call to the kept provider that unexported: %v, want its SERVICE_NOT_FOUND", err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for len(ref.Kept()) != 0 || len(ref.Providers()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("5s after its SERVICE_NOT_FOUND the provider is still kept: %v", ref.Kept())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

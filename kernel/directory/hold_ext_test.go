package directory_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestHoldKeepsAProviderUntilRefresh: a provider Hold's function holds
// stays listed, its invoker open, when the registry drops it, and goes
// (invoker closed once) at the Refresh after the function lets it go;
// one it does not hold goes at once. With none left, Ignored's lines
// name the providers listed last as having left the registry.
func TestHoldKeepsAProviderUntilRefresh(t *testing.T) {
	reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	var holding atomic.Bool
	holding.Store(true)
	d.Hold(func(p spi.URL) bool { return holding.Load() && p.Address() == "127.0.0.1:1" })
	a := register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
	b := register(t, reg, "airnode://127.0.0.1:2/demo.Echo?side=provider")
	start(t, d)
	waitLen(t, d, 2)
	for _, p := range []spi.URL{a, b} {
		if err := reg.Unregister(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	l := waitLen(t, d, 1)
	if l[0].URL().Address() != "127.0.0.1:1" {
		t.Fatalf("listed %v, want the held 127.0.0.1:1", l[0].URL())
	}
	if got := f.byAddress("127.0.0.1:1"); len(got) != 1 || got[0].closed.Load() != 0 {
		t.Fatalf("held provider's invoker: %d made, closed=%v", len(got), got[0].closed.Load())
	}
	if got := f.byAddress("127.0.0.1:2"); len(got) != 1 || got[0].closed.Load() != 1 {
		t.Fatalf("dropped provider's invoker not closed once")
	}
	if len(d.Providers()) != 1 || d.Providers()[0].Address() != "127.0.0.1:1" {
		t.Fatalf("Providers() = %v", d.Providers())
	}
	d.Refresh() // still held
	waitLen(t, d, 1)

	holding.Store(false)
	d.Refresh()
	if n := len(d.List(nil)); n != 0 {
		t.Fatalf("after Refresh %d listed, want 0", n)
	}
	if got := f.byAddress("127.0.0.1:1"); got[0].closed.Load() != 1 {
		t.Fatalf("released provider's invoker closed %d times, want 1", got[0].closed.Load())
	}
	why := strings.Join(d.Ignored(), "; ")
	// :2 left while :1 was still listed: the line names the providers
	// listed last
	if !strings.Contains(why, "127.0.0.1:1 was listed and has left the registry") {
		t.Fatalf("Ignored() = %q, want 127.0.0.1:1 named as having left", why)
	}

	// A provider back clears the line.
	register(t, reg, "airnode://127.0.0.1:3/demo.Echo?side=provider")
	waitLen(t, d, 1)
	deadline := time.Now().Add(5 * time.Second)
	for len(d.Ignored()) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(d.Ignored()) != 0 {
		t.Fatalf("Ignored() = %q with a provider listed", d.Ignored())
	}
}

package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// TestT69_WaitAvailableWaitsForAFirstProvider (tester69 finding 1): a
// consumer that starts before its provider, through a file registry
// listing none, had no Go API to wait with: WaitReady returned false
// within a microsecond (it judges the providers listed now) and a call
// failed SERVICE_NOT_FOUND at once. WaitAvailable waits for the
// registry's first listing and the provider's connection: it returns
// true soon after the provider is exported elsewhere, and the next call
// succeeds; with no provider at all it returns false when ctx ends, not
// before.
func TestT69_WaitAvailableWaitsForAFirstProvider(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("file://" + t.TempDir() + "?poll=50ms")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	c := NewNode(cat, WithRegistry(reg), WithLogger(quiet))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}

	// nothing listed: false when ctx ends, not at once
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	t0 := time.Now()
	ok := ref.WaitAvailable(short)
	cancelShort()
	if took := time.Since(t0); ok || took < 250*time.Millisecond {
		t.Fatalf("with no provider: WaitAvailable = %v after %v; want false after about 300ms", ok, took)
	}
	if ref.WaitReady(ctx) {
		t.Fatal("WaitReady = true with no provider")
	}

	// a provider exported 500 ms after the wait began
	p := NewNode(cat, WithRegistry(reg), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	exported := make(chan time.Time, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		if _, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Error(err)
		}
		exported <- time.Now()
	}()
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	ok = ref.WaitAvailable(wctx)
	back := time.Now()
	if !ok {
		t.Fatalf("WaitAvailable = false after %v; want true once the provider was exported", time.Since(t0))
	}
	at := <-exported
	if d := back.Sub(at); d > 5*time.Second {
		t.Errorf("WaitAvailable returned %v after the export; want within the registry's poll and a connection (5s bound)", d)
	}
	t.Logf("WaitAvailable returned %v after the export", back.Sub(at))
	var out string
	if err := ref.Call(ctx, "Echo", []any{"x"}, &out); err != nil || out != "x" {
		t.Fatalf("call after WaitAvailable: %q, %v", out, err)
	}
}

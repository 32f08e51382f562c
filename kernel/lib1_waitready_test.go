package kernel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// TestLib1_WaitReadyRightAfterRefer (tester47 finding 1): a provider
// exported on a memory:// registry, then, 1000 times, a fresh node of the
// same catalogs refers to it and waits: the reference lists the provider
// when Refer returns (the registry's first list, directory.Start), and
// WaitReady returns true. It returned false in under a millisecond about
// once in a few hundred: it read "no provider up" and then "no attempt
// pending", and a first connection made between the two reads was
// neither. Each consumer is a fresh node (a fresh connection pool), over
// real loopback connections.
func TestLib1_WaitReadyRightAfterRefer(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://lib1-ready")
	p := NewNode(cat, WithRegistry(reg), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		c := NewNode(cat, WithRegistry(reg), WithLogger(quiet))
		ref, err := c.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		listed := len(ref.dir.All())
		t0 := time.Now()
		ok := ref.WaitReady(ctx)
		took := time.Since(t0)
		var after string
		if !ok {
			for _, inv := range ref.dir.All() {
				after += fmt.Sprintf("; then %s available=%v connecting=%v", inv.URL().Address(), inv.Available(), isConnecting(inv))
			}
		}
		_ = c.Close()
		if listed != 1 || !ok {
			t.Fatalf("run %d: Refer returned listing %d providers (want 1); WaitReady = %v after %v%s", i, listed, ok, took, after)
		}
	}
}

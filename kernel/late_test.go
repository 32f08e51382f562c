package kernel

import (
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// TestCallRightAfterExportFindsTheProvider: tester10 #11, a reference
// made before its provider, called as soon as the provider's Export
// returned, failed at once with "no provider available" (the memory
// registry's push was still on its way, then the connection was being
// set up). Register now returns once the same process's subscribers have
// the provider, and the call waits for its first connection within its
// timeout (awaitProvider), over either transport.
func TestCallRightAfterExportFindsTheProvider(t *testing.T) {
	cat := testCatalogs(t)
	for _, tr := range []string{"smux", "tcp"} {
		for i := range 5 {
			reg := spi.MustParse("memory://late-" + tr)
			c := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
			r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?timeout=5s"), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
			if _, err := p.Export(ctxT(t), demo.New("late", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+tr)); err != nil {
				t.Fatal(err)
			}
			if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
				t.Errorf("%s, round %d: the call right after Export: %v, %v", tr, i, v, err)
			}
			_ = c.Close()
			_ = p.Close()
		}
	}
}

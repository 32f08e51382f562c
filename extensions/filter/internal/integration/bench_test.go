package integration

import (
	"context"
	"testing"
)

// BenchmarkEchoOverLoopback measures one Echo call through two real nodes
// over loopback smux: "Bare" with every filter removed on both sides
// (filter=-default), "Metrics" with the default chain (metrics on both
// sides). The filters' cost is the difference, from the same run.
func BenchmarkEchoOverLoopback(b *testing.B) {
	for _, c := range []struct{ name, q string }{{"Bare", "filter=-default"}, {"Metrics", ""}} {
		b.Run(c.name, func(b *testing.B) {
			pn, addr := providerB(b, c.q)
			defer pn.Close()
			cn := newNodeB(b)
			defer cn.Close()
			r := referB(b, cn, addr, c.q)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := r.Invoke(ctx, "Echo", "x"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

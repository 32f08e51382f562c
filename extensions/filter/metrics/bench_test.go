package metrics_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// BenchmarkFilter measures the metrics filter around a stub invoker; the
// Baseline sub-benchmark calls the stub directly, so the cost of the
// filter is Filter minus Baseline, from the same run.
func BenchmarkFilter(b *testing.B) {
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result { return spi.Result{} })
	f, err := metrics.NewBuilder(nil).Build(spi.MustParse("airnode://h:1/demo.Echo?side=provider"))
	if err != nil {
		b.Fatal(err)
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	ctx := context.Background()
	b.Run("Baseline", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				next.Invoke(ctx, inv)
			}
		})
	})
	b.Run("Filter", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				f.Invoke(ctx, next, inv)
			}
		})
	})
}

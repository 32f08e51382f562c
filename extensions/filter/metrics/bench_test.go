package metrics_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// nopInvoker answers every call at once and records nothing, so that a
// benchmark of a filter around it measures the filter alone.
type nopInvoker struct{ u spi.URL }

// failInvoker fails every call at once.
type failInvoker struct{ nopInvoker }

var errLate = spi.Errorf(spi.StatusServerTimeout, "late")

func (failInvoker) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: errLate}
}

func (n nopInvoker) URL() spi.URL                                       { return n.u }
func (n nopInvoker) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (n nopInvoker) Available() bool                                    { return true }
func (n nopInvoker) Stats() *spi.Stats                                  { return nil }
func (n nopInvoker) Close() error                                       { return nil }

// BenchmarkFilter measures the metrics filter around an invoker that does
// nothing, from one goroutine (c=1) and from GOMAXPROCS goroutines sharing
// its series (parallel), and of calls that fail (failing), with the call
// of the bare invoker as Baseline:
//
//	go test -run XXX -bench Filter -benchmem ./extensions/filter/metrics
func BenchmarkFilter(b *testing.B) {
	var next spi.Invoker = nopInvoker{spi.MustParse("airnode://h:1/demo.Echo")}
	f, err := metrics.NewBuilder(nil).Build(spi.MustParse("airnode://h:1/demo.Echo?side=provider"))
	if err != nil {
		b.Fatal(err)
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	ctx := context.Background()
	b.Run("Baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			next.Invoke(ctx, inv)
		}
	})
	b.Run("c=1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.Invoke(ctx, next, inv)
		}
	})
	b.Run("failing", func(b *testing.B) {
		var fail spi.Invoker = failInvoker{nopInvoker{spi.MustParse("airnode://h:1/demo.Echo")}}
		b.ReportAllocs()
		for b.Loop() {
			f.Invoke(ctx, fail, inv)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				f.Invoke(ctx, next, inv)
			}
		})
	})
}

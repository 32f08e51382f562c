package metrics_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestLatencyFromSharedClockReadings (issue 9): the filter times a call
// from the invocation's Began and to the result's Ended when the layers
// around it stamped them (the provider's exchange, the kernel's
// invokers), and reads the clock only for what is missing.
func TestLatencyFromSharedClockReadings(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	const hold = 30 * time.Millisecond
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		switch inv.Method {
		case "Stamped":
			// ended 20 ms after it began, whatever the clock says now
			return spi.Result{Value: "ok", Ended: inv.Began + 20*time.Millisecond}
		default:
			time.Sleep(hold)
			return spi.Result{Value: "ok"}
		}
	})
	began := spi.Mono() - time.Second // the exchange began it a second ago (a long decode)
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Stamped", Began: began})
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Unstamped"})

	stamped, _ := reg.Lookup(spi.Provider, "demo.Echo", "Stamped")
	if stamped.Count != 1 || math.Abs(stamped.MeanMillis-20) > 0.5 {
		t.Errorf("stamped call: %d calls, mean %.3f ms; want 1 call of 20 ms (Ended - Began)", stamped.Count, stamped.MeanMillis)
	}
	plain, _ := reg.Lookup(spi.Provider, "demo.Echo", "Unstamped")
	if plain.Count != 1 || plain.MeanMillis < float64(hold/time.Millisecond) || plain.MeanMillis > 1000 {
		t.Errorf("unstamped call: %d calls, mean %.3f ms; want 1 call of at least %v read from the clock", plain.Count, plain.MeanMillis, hold)
	}
}

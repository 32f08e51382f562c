package metrics_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestSwallowedFailureIsCountedWithItsStatus: a failure the cluster below
// the consumer's filters absorbed (failsafe: the caller gets a zero
// result and no error) is counted by the metrics series with its status,
// as the access log reports it (tester14 #6): it was counted OK.
func TestSwallowedFailureIsCountedWithItsStatus(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Consumer)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		if inv.Method == "Fail" {
			return spi.Result{Swallowed: spi.Errorf(spi.StatusServiceError, "boom")}
		}
		return spi.Result{Value: "ok"}
	})
	if res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Fail"}); res.Err != nil {
		t.Fatalf("the filter changed the result: %v", res.Err)
	}
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	fail, _ := reg.Lookup(spi.Consumer, "demo.Echo", "Fail")
	if fail.Count != 1 || fail.Failures != 1 || fail.FailuresByStatus["SERVICE_ERROR"] != 1 {
		t.Errorf("Fail row %+v: want 1 call, 1 SERVICE_ERROR failure", fail)
	}
	echo, _ := reg.Lookup(spi.Consumer, "demo.Echo", "Echo")
	if echo.Count != 1 || echo.Failures != 0 {
		t.Errorf("Echo row %+v: want 1 call, no failure", echo)
	}
}

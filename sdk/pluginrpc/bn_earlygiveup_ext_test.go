package pluginrpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// tester88 #3: on a provider, a plugin's filter that has not called next
// is given up on a little before the consumer's deadline (a tenth of what
// is left, at most 50ms), so that the provider's SERVER_TIMEOUT naming the
// filter reaches the consumer before its own timer: through Chain and
// through a pass (READS_RESULT=false). It waited for the deadline itself,
// racing the consumer's timer. The cause says how early
// (GaveUpBefore) and that the method was not called; next is not
// called. Once the filter has called next, the whole deadline applies: a
// method that ends 20ms before the deadline (inside the margin) returns
// its result through the filter.
func TestProviderGivesUpOnAPluginFilterBeforeTheDeadline(t *testing.T) {
	for _, readsResult := range []string{"true", "false"} {
		c := startMoody(t, "F_MODE=stuck", "READS_RESULT="+readsResult)
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: readsResult == "true"})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider"))
		if err != nil {
			t.Fatal(err)
		}
		next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Value: "ran"}
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		start := time.Now()
		res := f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		took := time.Since(start)
		deadlineLeft := ctx.Err() == nil
		cancel()
		var early interface{ GaveUpBefore() time.Duration }
		var where interface{ DeadlineBeforeMethod() string }
		if spi.StatusOf(res.Err) != spi.StatusServerTimeout || !errors.Is(res.Err, context.DeadlineExceeded) ||
			!errors.As(res.Err, &early) || early.GaveUpBefore() != 50*time.Millisecond ||
			!errors.As(res.Err, &where) || where.DeadlineBeforeMethod() != `filter "acme.moody"` || next.Calls() != 0 {
			t.Fatalf("READS_RESULT=%s: %v; want SERVER_TIMEOUT given up 50ms early, naming the filter, next not called (called %d)", readsResult, res.Err, next.Calls())
		}
		if !deadlineLeft || took < 900*time.Millisecond {
			t.Errorf("READS_RESULT=%s: answered after %v (deadline passed: %v); want about 950ms, before the 1s deadline", readsResult, took, !deadlineLeft)
		}
		const want = `filter "acme.moody": the plugin's filter still ran 50ms before the consumer's deadline, so the provider gave up on it then, for this answer to reach the consumer before its own timer; the call went no further`
		if !strings.Contains(res.Err.Error(), want) {
			t.Errorf("READS_RESULT=%s: %q; want it to hold %q", readsResult, res.Err, want)
		}
	}

	c := startMoody(t, "F_MODE=wrap")
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: true})
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(ctx context.Context, _ *spi.Invocation) spi.Result {
		d, _ := ctx.Deadline()
		time.Sleep(time.Until(d) - 20*time.Millisecond)
		return spi.Result{Value: "ran"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if res := f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); res.Err != nil || res.Value != "ran" {
		t.Fatalf("a method ending 20ms before the deadline, through a filter that called next: %+v; want its value", res)
	}
}

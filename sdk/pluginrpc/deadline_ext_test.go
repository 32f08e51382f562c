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

// nu77 #8: a provider's call whose deadline passes in a filter plugin
// that never answers (moody, F_MODE=stuck), through Chain or a pass, is
// SERVER_TIMEOUT whose cause names the filter as where the deadline
// passed before the method was called (DeadlineBeforeMethod, which the
// provider's exchange words its answer with); one whose deadline passes
// in the method the filter's next ran (F_MODE=wrap) does not say so; one
// whose deadline passes in the filter after its next returned
// (F_MODE=overrun) neither, and its message says that next had been
// called (it said "the call went no further", as before next).
func TestFilterPluginDeadlineSaysWhetherTheMethodWasCalled(t *testing.T) {
	for _, tc := range []struct {
		mode, readsResult string
		called            bool
	}{{"stuck", "true", false}, {"stuck", "false", false}, {"wrap", "true", true}, {"overrun", "true", true}} {
		c := startMoody(t, "F_MODE="+tc.mode, "READS_RESULT="+tc.readsResult)
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: tc.readsResult == "true"})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider"))
		if err != nil {
			t.Fatal(err)
		}
		next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(ctx context.Context, _ *spi.Invocation) spi.Result {
			if tc.mode == "overrun" {
				return spi.Result{Value: "ran"}
			}
			<-ctx.Done()
			return spi.Result{Err: &spi.Error{Status: spi.StatusServerTimeout, Message: "demo.Echo.Echo did not finish before the consumer's deadline", Cause: ctx.Err()}}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
		res := f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		cancel()
		var where interface{ DeadlineBeforeMethod() string }
		found := errors.As(res.Err, &where)
		if spi.StatusOf(res.Err) != spi.StatusServerTimeout || !errors.Is(res.Err, context.DeadlineExceeded) || found == tc.called ||
			found && where.DeadlineBeforeMethod() != `filter "acme.moody"` || next.Calls() > 0 != tc.called {
			t.Errorf("F_MODE=%s READS_RESULT=%s: %v (deadline before the method: %v), next called %d times; want SERVER_TIMEOUT, the method called: %v",
				tc.mode, tc.readsResult, res.Err, found, next.Calls(), tc.called)
		}
		const before, after = "; the call went no further", "; the plugin's filter had called next, so the method may have run"
		if msg := res.Err.Error(); tc.mode != "wrap" && (strings.Contains(msg, before) == tc.called || strings.Contains(msg, after) != tc.called) {
			t.Errorf("F_MODE=%s READS_RESULT=%s: %q; want it to say %q when next had been called (%v), else %q", tc.mode, tc.readsResult, msg, after, tc.called, before)
		}
	}
}

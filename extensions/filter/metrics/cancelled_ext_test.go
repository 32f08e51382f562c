package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestCancelledCallsAreNoFailures: a call that fails while its context is
// cancelled (on the provider: its consumer went away) is counted as
// cancelled, not as a failure, on both sides; a call whose deadline
// passed, or that fails with a live context, stays a failure.
func TestCancelledCallsAreNoFailures(t *testing.T) {
	for _, side := range []spi.Side{spi.Provider, spi.Consumer} {
		t.Run(string(side), func(t *testing.T) {
			reg := metrics.NewRegistry()
			f := build(t, metrics.NewBuilder(reg), side)
			// The method returns ctx.Err() as a service would: wrapped as
			// SERVICE_ERROR by the kernel's method table.
			next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
				if inv.Method == "Fail" {
					return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
				}
				<-ctx.Done()
				return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "demo.Echo.Sleep: %w", ctx.Err())}
			})
			sleep := &spi.Invocation{Service: "demo.Echo", Method: "Sleep"}
			for range 2 {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(time.Millisecond, cancel)
				f.Invoke(ctx, next, sleep)
				cancel()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			f.Invoke(ctx, next, sleep)
			cancel()
			f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Fail"})

			row, _ := reg.Lookup(side, "demo.Echo", "Sleep")
			if row.Count != 3 || row.Cancelled != 2 || row.Failures != 1 || row.FailuresByStatus["SERVICE_ERROR"] != 1 || row.SuccessRate != 0 {
				t.Errorf("Sleep row %+v: want count 3, cancelled 2, 1 failure (the passed deadline)", row)
			}
			fail, _ := reg.Lookup(side, "demo.Echo", "Fail")
			if fail.Count != 1 || fail.Cancelled != 0 || fail.Failures != 1 {
				t.Errorf("Fail row %+v", fail)
			}
		})
	}
}

// TestOnlyCancelledCallsReadAsNoRate: a method whose every call was
// cancelled shows "-" for its success rate, not 0.00%, and the cancelled
// calls in their own column and Prometheus family.
func TestOnlyCancelledCallsReadAsNoRate(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		if inv.Method == "Echo" {
			return spi.Result{Value: 1}
		}
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "%w", ctx.Err())}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Sleep"})
	f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}) // OK with a cancelled context: a success
	rows := reg.Snapshot()
	var b bytes.Buffer
	if err := metrics.WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "IN-FLIGHT  CANCELLED  FAIL/10s  FAILURES") || !strings.HasPrefix(lines[3], "TPS/10s: ") {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[1]); f[2] != "Echo" || f[4] != "100.00%" || f[10] != "0" || f[11] != "0.0" || len(f) != 12 {
		t.Errorf("Echo line %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[2] != "Sleep" || f[4] != "-" || f[10] != "1" || f[11] != "0.0" || len(f) != 12 {
		t.Errorf("Sleep line %q: want success -, cancelled 1, no failures", lines[2])
	}
	// The JSON (/stats) says null where the table says "-" (tester8).
	js, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(js); strings.Count(got, `"success_rate":null`) != 1 || !strings.Contains(got, `"success_rate":1`) || !strings.Contains(got, `"method":"Sleep"`) {
		t.Errorf("JSON: want success_rate 1 for Echo and null for Sleep: %s", got)
	}
	var back []metrics.MethodStats
	if err := json.Unmarshal(js, &back); err != nil || len(back) != 2 || back[0].SuccessRate != 1 || back[1].SuccessRate != 0 || back[1].Cancelled != 1 {
		t.Errorf("JSON read back: %+v, %v", back, err)
	}
	var exp bytes.Buffer
	mfs, err := reg.Prometheus().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "airnode_call") {
			if _, err := expfmt.MetricFamilyToText(&exp, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, want := range []string{
		`airnode_calls_cancelled_total{method="Sleep",service="demo.Echo",side="provider"} 1`,
		`airnode_calls_cancelled_total{method="Echo",service="demo.Echo",side="provider"} 0`,
		`airnode_calls_total{method="Sleep",service="demo.Echo",side="provider"} 1`,
	} {
		if !strings.Contains(exp.String(), want) {
			t.Errorf("exposition lacks %q:\n%s", want, exp.String())
		}
	}
	if strings.Contains(exp.String(), "airnode_call_failures_total{") {
		t.Errorf("a cancelled call was counted in airnode_call_failures_total:\n%s", exp.String())
	}
}

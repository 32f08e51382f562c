package metrics_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// TestT92_ShareNeverRoundsToWhole (tester92 #2): stats printed a consumer
// row of 451482 calls, 8 of them CHANNEL_INACTIVE, as 100.00% successful
// and the provider row of the same calls as FAILED 0.00%. A share that is
// not exactly 0 or 100 % now prints "<0.01%" or ">99.99%"; exact ones and
// ordinary ones print as before.
func TestT92_ShareNeverRoundsToWhole(t *testing.T) {
	for _, tc := range []struct {
		calls, failures int64
		success, failed string
	}{
		{451482, 8, ">99.99%", "<0.01%"},
		{451482, 451474, "<0.01%", ">99.99%"},
		{451482, 0, "100.00%", "0.00%"},
		{451482, 451482, "0.00%", "100.00%"},
		{200, 50, "75.00%", "25.00%"},
		{20000, 1, ">99.99%", "0.01%"}, // 99.995 % would round to 100.00; 0.005 % rounds to 0.01, a true non-zero figure
	} {
		var table strings.Builder
		err := metrics.WriteTable(&table, []metrics.MethodStats{{Side: spi.Consumer, Service: "demo.Echo", Method: "Echo",
			Count: tc.calls, Failures: tc.failures, SuccessRate: float64(tc.calls-tc.failures) / float64(tc.calls)}})
		if f := strings.Fields(strings.Split(table.String(), "\n")[1]); err != nil || len(f) < 5 || f[4] != tc.success {
			t.Errorf("%d of %d failed: method row %q (%v), want SUCCESS %s", tc.failures, tc.calls, table.String(), err, tc.success)
		}
		table.Reset()
		err = metrics.WriteProviders(&table, []metrics.ProviderStats{{Service: "demo.Echo", Provider: "127.0.0.1:1",
			Calls: tc.calls, Failures: tc.failures, Available: true, Connected: true}})
		if f := strings.Fields(strings.Split(table.String(), "\n")[1]); err != nil || len(f) < 5 || f[4] != tc.failed {
			t.Errorf("%d of %d failed: provider row %q (%v), want FAILED %s", tc.failures, tc.calls, table.String(), err, tc.failed)
		}
	}
}

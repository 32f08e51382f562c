package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/airnode/airnode/bench"
)

// TestT92_BenchFailedShareNeverRoundsToWhole (tester92 #2, bench's
// summary too): a few failures of many print "<0.1%", not "0.0%", and
// all but a few ">99.9%", not "100.0%".
func TestT92_BenchFailedShareNeverRoundsToWhole(t *testing.T) {
	for _, tc := range []struct {
		calls, failed int64
		want          string
	}{
		{451482, 8, "8 of 451482 calls FAILED (<0.1%)"},
		{451482, 451474, "451474 of 451482 calls FAILED (>99.9%)"},
		{100, 100, "100 of 100 calls FAILED (100.0%)"},
		{200, 50, "50 of 200 calls FAILED (25.0%)"},
	} {
		r := &bench.Report{Calls: tc.calls, OK: tc.calls - tc.failed, Errors: map[string]int64{"CHANNEL_INACTIVE": tc.failed},
			Concurrency: 2, ElapsedSec: 1, CallsPerSec: float64(tc.calls), MeanUS: 300, P50US: 250, P99US: 900, P999US: 950, MaxUS: 1000}
		var out bytes.Buffer
		printOutcome(&out, "demo.Echo", benchOutcome{Report: r, Case: &benchCase{Req: 100, Resp: 100, Concurrency: 2}}, benchFlags{connections: 1})
		if !strings.Contains(out.String(), "  errors      "+tc.want+": CHANNEL_INACTIVE ") {
			t.Errorf("want %q in the summary:\n%s", tc.want, out.String())
		}
	}
}

package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// TestT92_WeightZeroState (tester92 #1): a connected provider whose entry
// has weight 0 is StateWeightZero, not available, ejected or not, in the
// gauge (ProviderStates, whose four states are all there at 0), the
// table and the JSON ("weight_zero"); without a usable connection it is
// unavailable, as any provider; a row from a node that predates
// weight_zero reads as before.
func TestT92_WeightZeroState(t *testing.T) {
	for _, tc := range []struct {
		available, connected, ejected, zero bool
		want                                string
	}{
		{false, true, false, true, metrics.StateWeightZero},
		{false, true, true, true, metrics.StateWeightZero}, // taken out is what lasts; the ejection ends by itself
		{false, false, false, true, metrics.StateUnavailable},
		{true, true, false, false, metrics.StateAvailable},
	} {
		r := metrics.NewRegistry()
		release := r.AddProviders(func() []spi.ProviderStats {
			return []spi.ProviderStats{{Service: "s", Provider: "127.0.0.1:1", Available: tc.available,
				Connected: tc.connected, Ejected: tc.ejected, WeightZero: tc.zero}}
		})
		rows := r.Providers()
		if got := rows[0].State(); got != tc.want {
			t.Errorf("%+v: State %q, want %q", tc, got, tc.want)
		}
		states := r.ProviderStates()["s"]
		if len(states) != 4 || states[tc.want] != 1 {
			t.Errorf("%+v: ProviderStates %v, want the four states, 1 %s", tc, states, tc.want)
		}
		var table strings.Builder
		if err := metrics.WriteProviders(&table, rows); err != nil || !strings.Contains(table.String(), "  "+tc.want+" ") {
			t.Errorf("table %q (%v), want STATE %s", table.String(), err, tc.want)
		}
		js, err := json.Marshal(rows[0])
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(js, &back); err != nil || back["state"] != tc.want || back["weight_zero"] != tc.zero {
			t.Errorf("JSON %s: want state %q and weight_zero %v", js, tc.want, tc.zero)
		}
		release()
	}
	var old metrics.ProviderStats // a /stats row of a node that predates weight_zero
	if err := json.Unmarshal([]byte(`{"service":"s","provider":"127.0.0.1:1","available":true,"connected":true}`), &old); err != nil || old.State() != metrics.StateAvailable {
		t.Errorf("old row: %v, state %q; want available", err, old.State())
	}
}

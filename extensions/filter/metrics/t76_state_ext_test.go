package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// TestT76_StateConnectionWins (tester76 #1): a provider with no usable
// connection is unavailable whether or not it is ejected; ejected is a
// connected provider out of the picks. The gauge (ProviderStates), the
// table and the /stats JSON's "state" give that one answer.
func TestT76_StateConnectionWins(t *testing.T) {
	for _, tc := range []struct {
		available, connected, ejected bool
		want                          string
	}{
		{true, true, false, metrics.StateAvailable},
		{false, true, true, metrics.StateEjected},
		{false, false, true, metrics.StateUnavailable}, // ejected, then its connection lost: redialling
		{false, false, false, metrics.StateUnavailable},
		{false, true, false, metrics.StateUnavailable}, // connected, not pickable (going away)
		{true, false, false, metrics.StateAvailable},   // a row from a node without "connected"
	} {
		r := metrics.NewRegistry()
		release := r.AddProviders(func() []spi.ProviderStats {
			return []spi.ProviderStats{{Service: "s", Provider: "127.0.0.1:1", Available: tc.available, Connected: tc.connected, Ejected: tc.ejected}}
		})
		rows := r.Providers()
		if got := rows[0].State(); got != tc.want {
			t.Errorf("available %v connected %v ejected %v: State %q, want %q", tc.available, tc.connected, tc.ejected, got, tc.want)
		}
		if n := r.ProviderStates()["s"][tc.want]; n != 1 {
			t.Errorf("available %v connected %v ejected %v: ProviderStates %v, want 1 %s", tc.available, tc.connected, tc.ejected, r.ProviderStates()["s"], tc.want)
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
		if err := json.Unmarshal(js, &back); err != nil || back["state"] != tc.want || back["connected"] != tc.connected {
			t.Errorf("JSON %s: want state %q and connected %v", js, tc.want, tc.connected)
		}
		release()
	}
}

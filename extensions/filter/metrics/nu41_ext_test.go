package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// Tester nu41 (item 8): failures_by_status, health.reason, .plugins and
// .warnings were left out of /stats when empty, so `jq -e
// '.health.warnings'` failed on a healthy node. They are always there.
func TestNu41_EmptyFieldsAreInTheJSON(t *testing.T) {
	b, err := json.Marshal(metrics.MethodStats{Count: 1})
	if err != nil || !strings.Contains(string(b), `"failures_by_status":{}`) {
		t.Errorf("MethodStats: %s (%v)", b, err)
	}
	h := metrics.NewHealth()
	h.SetState(metrics.NodeServing, "")
	b, err = json.Marshal(h.Report())
	for _, w := range []string{`"reason":""`, `"plugins":{}`, `"warnings":[]`} {
		if err != nil || !strings.Contains(string(b), w) {
			t.Errorf("HealthReport %s (%v) lacks %s", b, err, w)
		}
	}
}

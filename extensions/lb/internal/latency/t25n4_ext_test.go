package latency_test

import (
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/internal/latency"
	"github.com/airnode/airnode/spi"
)

// probed is an Estimator and Prober that grants a probe every time.
type probed struct{ probes int }

func (*probed) Observe(_, _ time.Duration) {}

func (p *probed) Probe(time.Duration) bool { p.probes++; return true }

// Probe reaches the estimate's own Probe once the provider has one; it
// is false before the first Read and for an Estimator that cannot probe.
func TestT25_N4_TrackerProbe(t *testing.T) {
	tr := latency.NewTracker[probed](probed{}, time.Second, time.Minute)
	var s spi.Stats
	if tr.Probe(&s, 0) {
		t.Fatal("probe granted before the provider's first Read")
	}
	tr.Read(&s, 0)
	if !tr.Probe(&s, 1) || !tr.Probe(&s, 2) {
		t.Fatal("the estimate's Probe was not consulted")
	}
	if got := tr.Read(&s, 3).probes; got != 2 {
		t.Fatalf("the estimate saw %d probes, want 2", got)
	}
	plain := latency.NewTracker[samples](samples{}, time.Second, time.Minute)
	plain.Read(&s, 0)
	if plain.Probe(&s, 1) {
		t.Fatal("probe granted by an Estimator that is not a Prober")
	}
}

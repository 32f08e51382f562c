package latency_test

import (
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/internal/latency"
	"github.com/airnode/airnode/spi"
)

// samples is an Estimator that records what it is fed.
type samples struct{ got []time.Duration }

func (s *samples) Observe(_, rtt time.Duration) { s.got = append(s.got, rtt) }

func end(s *spi.Stats, d time.Duration, ok bool) { s.Begin(); s.End(d, ok) }

// Each Read feeds the mean round trip of the calls finished since the
// previous one, a failed call adding the penalty; no new call, no sample.
func TestTrackerFeedsMeansSinceLastRead(t *testing.T) {
	tr := latency.NewTracker[samples](samples{}, time.Second, time.Minute)
	var s spi.Stats
	end(&s, 10*time.Millisecond, true)
	end(&s, 30*time.Millisecond, true)
	if got := tr.Read(&s, 0).got; len(got) != 1 || got[0] != 20*time.Millisecond {
		t.Fatalf("after two calls: samples %v, want [20ms]", got)
	}
	if got := tr.Read(&s, 1).got; len(got) != 1 {
		t.Fatalf("no new call: samples %v, want still one", got)
	}
	end(&s, 5*time.Millisecond, false)
	got := tr.Read(&s, 2).got
	if len(got) != 2 || got[1] != time.Second+5*time.Millisecond {
		t.Fatalf("after a failed 5ms call: samples %v, want [20ms 1.005s]", got)
	}
	// Another provider has an estimate of its own.
	var o spi.Stats
	if got := tr.Read(&o, 3).got; len(got) != 0 {
		t.Fatalf("a provider with no call: samples %v, want none", got)
	}
}

func TestPenaltyIsTheTimeout(t *testing.T) {
	for q, want := range map[string]time.Duration{"": time.Second, "?timeout=250": 250 * time.Millisecond, "?timeout=2s": 2 * time.Second} {
		if got, err := latency.Penalty(spi.MustParse("consumer://h/demo.Echo" + q)); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", q, got, err, want)
		}
	}
	for _, v := range []string{"0", "-1s", "soon"} {
		_, err := latency.Penalty(spi.MustParse("consumer://h/demo.Echo?timeout=" + v))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != latency.KeyTimeout || pe.Value != v {
			t.Errorf("timeout=%s: got %v, want a ParamError naming key and value", v, err)
		}
	}
}

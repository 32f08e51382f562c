package warmup_test

import (
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi/spitest"
)

// Progress (the consumer's airnode_consumer_provider_weight and
// _warmup_remaining_seconds) gives the weight Weight gives, and the
// warm-up left as Left computes it: 0 once warm, off, at weight 0 or
// without a timestamp; the whole warm-up and the skew while the
// provider's clock is ahead.
func TestProgressIsWeightAndLeft(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	cases := []struct {
		name                  string
		params                string
		weight, eff, leftSecs int64
	}{
		{"warming 15s of 30s", "warmup=30s&timestamp=" + ms(epoch.Add(-15*time.Second)), 100, 50, 15},
		{"just started", "weight=200&warmup=30s&timestamp=" + ms(epoch), 200, 1, 30},
		{"warm", "warmup=30s&timestamp=" + ms(epoch.Add(-time.Minute)), 100, 100, 0},
		{"warm-up off", "warmup=0&timestamp=" + ms(epoch), 100, 100, 0},
		{"weight 0", "weight=0&warmup=30s&timestamp=" + ms(epoch), 0, 0, 0},
		{"no timestamp", "warmup=30s", 100, 100, 0},
		{"clock 10s ahead", "warmup=30s&timestamp=" + ms(epoch.Add(10*time.Second)), 100, 1, 40},
	}
	for _, tc := range cases {
		x := spitest.NewStubInvoker(provider(tc.params), nil)
		weight, eff, left := w.Progress(x, w.Now())
		if weight != tc.weight || eff != tc.eff || left != tc.leftSecs*1000 {
			t.Errorf("%s: Progress %d, %d, %d ms; want %d, %d, %d ms", tc.name, weight, eff, left, tc.weight, tc.eff, tc.leftSecs*1000)
		}
		if got := w.Weight(x.URL(), w.Now()); got != eff {
			t.Errorf("%s: Weight %d, Progress's effective %d", tc.name, got, eff)
		}
	}
	// restarted 10 s ago on the address of a warm entry (spi.ProviderStart):
	// its ramp and its warm-up left count from the restart, as WeightOf's
	x := newStarted("warmup=30s&timestamp="+ms(epoch.Add(-time.Hour)), epoch.Add(-10*time.Second), nil)
	if weight, eff, left := w.Progress(x, w.Now()); weight != 100 || eff != 33 || left != 20_000 || eff != w.WeightOf(x, w.Now()) {
		t.Errorf("restarted: Progress %d, %d, %d ms; want 100, 33 (WeightOf %d), 20000 ms", weight, eff, left, w.WeightOf(x, w.Now()))
	}
	if got := warmup.Left(100, 30_000, 29_999); got != 1 {
		t.Errorf("Left 1 ms before the end: %d, want 1", got)
	}
}

package warmup_test

import (
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
)

// BenchmarkWeight measures one effective-weight computation from a URL
// carrying weight, warmup and timestamp.
func BenchmarkWeight(b *testing.B) {
	w := warmup.New()
	u := provider("weight=100&warmup=10m&timestamp=" + ms(time.Now().Add(-time.Minute)))
	now := w.Now()
	b.ReportAllocs()
	for b.Loop() {
		w.Weight(u, now)
	}
}

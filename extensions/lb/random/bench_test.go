package random_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/spi"
)

// BenchmarkSelect measures one pick among warm providers of equal weight
// (the common case: the uniform path) and among providers of different
// weights, one of them still warming up (the weighted path):
//
//	go test -run XXX -bench Select -benchmem ./extensions/lb/random
func BenchmarkSelect(b *testing.B) {
	started := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	for _, c := range []struct {
		name   string
		params []string
	}{
		{"uniform/2", []string{"", ""}},
		{"uniform/8", []string{"", "", "", "", "", "", "", ""}},
		{"weighted/3", []string{"weight=50", "weight=200", "warmup=10m&timestamp=" + started}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lb, err := random.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
			if err != nil {
				b.Fatal(err)
			}
			l := invokers(c.params...)
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
			b.ReportAllocs()
			for b.Loop() {
				if lb.Select(l, inv) == nil {
					b.Fatal("nil pick")
				}
			}
		})
	}
}

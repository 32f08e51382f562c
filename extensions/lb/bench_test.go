package lb_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/consistenthash"
	"github.com/airnode/airnode/extensions/lb/leastactive"
	"github.com/airnode/airnode/extensions/lb/p2c"
	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/lb/roundrobin"
	"github.com/airnode/airnode/extensions/lb/shortestresponse"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// BenchmarkSelect measures one pick per op for every bundled balancer with
// 10 and 1,000 providers, each with a weight, a warm-up period and a
// timestamp (a tenth of them still warming up), the way they come from a
// registry.
//
//	go test -run '^$' -bench BenchmarkSelect -benchmem ./extensions/lb/
func BenchmarkSelect(b *testing.B) {
	builders := []spi.LoadBalanceBuilder{
		random.Builder{}, roundrobin.Builder{}, leastactive.Builder{},
		consistenthash.Builder{}, shortestresponse.Builder{}, p2c.Builder{},
	}
	now := time.Now()
	for _, bl := range builders {
		for _, n := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/%d", bl.Name(), n), func(b *testing.B) {
				l := make([]spi.Invoker, n)
				for i := range l {
					started := now.Add(-time.Hour)
					if i%10 == 0 {
						started = now.Add(-time.Minute)
					}
					u := spi.MustParse(fmt.Sprintf("airnode://10.%d.%d.%d:20880/demo.Echo?weight=100&warmup=10m&timestamp=%d",
						i>>16&255, i>>8&255, i&255, started.UnixMilli()))
					x := spitest.NewStubInvoker(u, nil)
					x.Stats().Begin()
					x.Stats().End(time.Duration(1+i%7)*time.Millisecond, true)
					l[i] = x
				}
				lb, err := bl.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
				if err != nil {
					b.Fatal(err)
				}
				inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"user-" + strconv.Itoa(n)}}
				lb.Select(l, inv)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if lb.Select(l, inv) == nil {
						b.Fatal("nil pick")
					}
				}
			})
		}
	}
}

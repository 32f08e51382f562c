package pluginhost_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/examples/greeter"
	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// Per-call cost of a plugin balancer against bundled and in-process ones:
//
//	go test -run '^$' -bench . -benchmem ./kernel/pluginhost/
func BenchmarkSelect(b *testing.B) {
	busy, idle := busyIdle()
	list := []spi.Invoker{busy, idle, spitest3()}
	ref := spi.MustParse("airnode://127.0.0.1/demo.Echo")
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hello"}}
	run := func(b *testing.B, bl spi.LoadBalanceBuilder) {
		lb, err := bl.Build(ref)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if lb.Select(list, inv) == nil {
				b.Fatal("nil")
			}
		}
	}
	b.Run("bundled-random", func(b *testing.B) { run(b, random.New()) })
	b.Run("inprocess-p2c", func(b *testing.B) { run(b, p2c.Builder{}) })
	b.Run("plugin-p2c", func(b *testing.B) {
		h := pluginhost.New([]config.Plugin{p2cSpec()}, pluginhost.WithLogger(testLogger(nil)))
		defer h.Close()
		if err := h.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		c := extensionCatalogs(b)
		if err := h.Register(c); err != nil {
			b.Fatal(err)
		}
		bl, _ := c.LoadBalance.Get(p2cName)
		b.Run("serial", func(b *testing.B) { run(b, bl) })
		b.Run("parallel", func(b *testing.B) {
			lb, _ := bl.Build(ref)
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if lb.Select(list, inv) == nil {
						b.Error("nil")
					}
				}
			})
		})
	})
}

// funcInvoker is an in-process provider: what Node.Export calls, minus
// argument decoding.
type funcInvoker struct {
	spi.Invoker
	fn func(ctx context.Context, inv *spi.Invocation) spi.Result
}

func (f funcInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	return f.fn(ctx, inv)
}

// Per-call cost of a service in a plugin process against the same code in
// process.
func BenchmarkServiceInvoke(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, iv spi.Invoker) {
		b.ReportAllocs()
		for b.Loop() {
			res := iv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}})
			if res.Err != nil || res.Value != "Hello, Ann" {
				b.Fatal(res.Value, res.Err)
			}
		}
	}
	b.Run("inprocess", func(b *testing.B) {
		g := greeter.Greeter{}
		run(b, funcInvoker{fn: func(ctx context.Context, inv *spi.Invocation) spi.Result {
			v, err := g.Hello(ctx, inv.Args[0].(string))
			return spi.Result{Value: v, Err: err}
		}})
	})
	b.Run("plugin", func(b *testing.B) {
		h := pluginhost.New([]config.Plugin{{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")}},
			pluginhost.WithLogger(testLogger(nil)))
		defer h.Close()
		if err := h.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		iv := h.Services()[0].Invoker(spi.MustParse("airnode://127.0.0.1:20880/greeter.Greeter"))
		b.Run("serial", func(b *testing.B) { run(b, iv) })
		b.Run("parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if res := iv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}}); res.Err != nil {
						b.Error(res.Err)
					}
				}
			})
		})
	})
}

package leastactive

import (
	"log/slog"
	"math"
	"math/rand/v2"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "leastactive"

// Builder builds least-active balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock, logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "leastactive".
func (Builder) Name() string { return Name }

// Build returns a balancer for one reference. leastactive has no keys of its
// own, so it never fails.
func (b Builder) Build(spi.URL) (spi.LoadBalance, error) {
	return &Balancer{c: warmup.NewCache(warmup.New(b.opts...))}, nil
}

// Balancer is a least-active balancer.
type Balancer struct{ c *warmup.Cache }

// Select returns the invoker with the fewest active calls; among several
// with the same count it picks one with probability proportional to its
// effective weight, in one pass (weighted reservoir sampling, Chao 1982)
// where Dubbo collects the tied indexes in an array. Invokers with weight 0
// are never picked; nil is returned when invokers is empty or every weight
// is 0. An invoker with nil Stats counts as idle.
func (b *Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	v := b.c.View(invokers)
	var (
		best      spi.Invoker
		least     int64 = math.MaxInt64
		tiedTotal int64
	)
	for i, x := range invokers {
		wt := v.Weight(i)
		if wt == 0 {
			continue
		}
		var active int64
		if s := x.Stats(); s != nil {
			active = s.Active()
		}
		switch {
		case active < least:
			least, best, tiedTotal = active, x, wt
		case active == least:
			tiedTotal += wt
			if rand.Int64N(tiedTotal) < wt {
				best = x
			}
		}
	}
	return best
}

// Interface guards.
// UseLogger makes the balancer's warnings (malformed weight or warm-up
// values, a provider's clock ahead) go to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (b *Balancer) UseLogger(l *slog.Logger) { b.c.UseLogger(l) }

var (
	_ spi.LoadBalanceBuilder = Builder{}
	_ spi.LoadBalance        = (*Balancer)(nil)
	_ spi.LoggerUser         = (*Balancer)(nil)
)

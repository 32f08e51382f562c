package random

import (
	"log/slog"
	"math/rand/v2"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "random"

// Builder builds random balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock, logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "random".
func (Builder) Name() string { return Name }

// Build returns a balancer for one reference. random has no keys of its
// own, so it never fails.
func (b Builder) Build(spi.URL) (spi.LoadBalance, error) {
	return &Balancer{c: warmup.NewCache(warmup.New(b.opts...))}, nil
}

// Balancer is a weighted random balancer.
type Balancer struct{ c *warmup.Cache }

// Select picks an invoker with probability proportional to its effective
// weight, or uniformly when every weight is the same (Dubbo's
// RandomLoadBalance). Over an unchanged list it costs O(log n): no
// provider's weight is computed per call (warmup.Cache). It returns nil when
// invokers is empty or every weight is 0.
func (b *Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	n := len(invokers)
	if n == 0 {
		return nil
	}
	v := b.c.View(invokers)
	if wt, ok := v.Same(); ok {
		// The common case, warm providers of one weight: no weight to
		// read (BenchmarkSelect uniform/2: 75 -> 45 ns, uniform/8: 126 ->
		// 75 ns).
		if wt == 0 {
			return nil
		}
		return invokers[rand.IntN(n)]
	}
	// Weighted: a binary search of the cached list's prefix sums
	// (warmup.View.Pick), O(log n); the weights are computed again only
	// when one changes (warmup.Cache).
	total := v.Total()
	if total == 0 {
		return nil
	}
	if i := v.Pick(rand.Int64N(total)); i >= 0 {
		return invokers[i]
	}
	return invokers[n-1] // unreachable: the offset is below the total
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

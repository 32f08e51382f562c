package shortestresponse

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "shortestresponse"

// KeySlidePeriod is the length of the response-time window, a positive
// duration (default spi.DefaultSlidePeriod, 30s).
const KeySlidePeriod = spi.KeySlidePeriod

// Builder builds shortest-response balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock, logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "shortestresponse".
func (Builder) Name() string { return Name }

// Build validates shortestresponse.slidePeriod in u: a malformed or zero
// value is an error naming the key and the value.
func (b Builder) Build(u spi.URL) (spi.LoadBalance, error) {
	p, err := u.Duration(KeySlidePeriod, spi.DefaultSlidePeriod)
	if err != nil {
		return nil, err
	}
	if p <= 0 {
		v, _ := u.Param(KeySlidePeriod)
		return nil, &spi.ParamError{Key: KeySlidePeriod, Value: v, Want: "a positive duration such as 30s"}
	}
	_, set := u.Param(KeySlidePeriod)
	return &Balancer{c: warmup.NewCache(warmup.New(b.opts...)), period: p, apply: set}, nil
}

// Balancer is a shortest-response balancer.
type Balancer struct {
	c      *warmup.Cache
	period time.Duration
	apply  bool // the reference URL set KeySlidePeriod

	applied atomic.Pointer[[]spi.Invoker] // last list given the period
}

// SlidePeriod returns the window length the reference URL asked for.
func (b *Balancer) SlidePeriod() time.Duration { return b.period }

// Select returns the invoker with the lowest mean × (active + 1), a
// weighted random pick among ties (weighted reservoir sampling in one pass).
// Invokers with weight 0 are never picked; nil is returned when invokers is
// empty or every weight is 0. An invoker with nil Stats is estimated 0.
func (b *Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	if b.apply {
		b.applyPeriod(invokers)
	}
	v := b.c.View(invokers)
	now := time.Now() // for the Stats windows; read once
	var (
		best      spi.Invoker
		shortest  int64 = math.MaxInt64
		tiedTotal int64
	)
	for i, x := range invokers {
		wt := v.Weight(i)
		if wt == 0 {
			continue
		}
		est := estimate(x.Stats(), now)
		switch {
		case est < shortest:
			shortest, best, tiedTotal = est, x, wt
		case est == shortest:
			tiedTotal += wt
			if rand.Int64N(tiedTotal) < wt {
				best = x
			}
		}
	}
	return best
}

// applyPeriod sets the reference's slide period on the Stats of every
// invoker of a list it has not seen yet (an unchanged list, the same
// slice, costs one comparison: warmup.SameList).
func (b *Balancer) applyPeriod(invokers []spi.Invoker) {
	if last := b.applied.Load(); last != nil && warmup.SameList(*last, invokers) {
		return
	}
	comparable := true
	for _, x := range invokers {
		if s := x.Stats(); s != nil {
			s.SetSlidePeriod(b.period)
		}
		comparable = comparable && reflect.TypeOf(x).Comparable()
	}
	if comparable {
		l := slices.Clone(invokers)
		b.applied.Store(&l)
	}
}

// estimate is mean successful response time (ns) × (active + 1),
// saturating at math.MaxInt64 - 1 so that it always beats "none yet".
func estimate(s *spi.Stats, now time.Time) int64 {
	if s == nil {
		return 0
	}
	mean, _ := s.MeanResponseAt(now)
	m, k := int64(mean), s.Active()+1
	if m <= 0 || k <= 0 {
		return 0
	}
	if m > (math.MaxInt64-1)/k {
		return math.MaxInt64 - 1
	}
	return m * k
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

package shortestresponse

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/extensions/lb/internal/latency"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "shortestresponse"

// KeySlidePeriod sets how fast the estimates forget: an estimate decays
// toward "unknown" with time constant slidePeriod / 30 while its provider
// gets no answer. A positive duration (default spi.DefaultSlidePeriod,
// 30s); Dubbo's name, where it was the length of a window.
const KeySlidePeriod = spi.KeySlidePeriod

// Builder builds shortest-response balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock, logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "shortestresponse".
func (Builder) Name() string { return Name }

// Build validates shortestresponse.slidePeriod (> 0) and timeout (> 0, the
// kernel's key: the penalty of a failed call) in u: a malformed or
// out-of-bounds value is a *spi.ParamError naming the key and the value.
func (b Builder) Build(u spi.URL) (spi.LoadBalance, error) {
	p, err := u.Duration(KeySlidePeriod, spi.DefaultSlidePeriod)
	if err != nil {
		return nil, err
	}
	if p <= 0 {
		v, _ := u.Param(KeySlidePeriod)
		return nil, &spi.ParamError{Key: KeySlidePeriod, Value: v, Want: "a positive duration such as 30s"}
	}
	penalty, err := latency.Penalty(u)
	if err != nil {
		return nil, err
	}
	_, set := u.Param(KeySlidePeriod)
	return &Balancer{
		c:      warmup.NewCache(warmup.New(b.opts...)),
		period: p,
		apply:  set,
		rt:     latency.NewTracker[recent](recent{tau: p / 30}, penalty, max(10*p, time.Minute)),
	}, nil
}

// Balancer is a shortest-response balancer.
type Balancer struct {
	c      *warmup.Cache
	period time.Duration
	apply  bool                              // the reference URL set KeySlidePeriod
	rt     *latency.Tracker[recent, *recent] // each provider's expected response time

	applied atomic.Pointer[[]spi.Invoker] // last list given the period
}

// SlidePeriod returns the reference URL's shortestresponse.slidePeriod.
func (b *Balancer) SlidePeriod() time.Duration { return b.period }

// Floor is the least response time an estimate counts as (Dubbo's
// whole-millisecond granularity): providers that answer in under a
// millisecond are equally fast, and compare by calls in flight alone.
const Floor = time.Millisecond

// Tolerance is how far above the lowest estimate a provider still ties
// with it: estimates up to lowest × (1 + Tolerance) share the picks at
// random by effective weight.
const Tolerance = 1.0 / 8

// scan is how many estimates Select keeps on its stack; a longer list
// takes a buffer from bufs.
const scan = 64

// bufs holds estimate buffers for lists longer than scan.
var bufs = sync.Pool{New: func() any { return new([]float64) }}

// Select returns, among the invokers whose estimate
//
//	max(expected response time, Floor) × (calls in flight + 1)
//
// is within Tolerance of the lowest, one picked at random by effective
// weight (package warmup). The expected response time is this consumer's
// recent round trips to the provider, fed from its spi.Stats (see recent:
// each answer weighs at least Weight, one raises it by at most
// max(itself, Floor)); a failed call counts as its round trip plus the
// reference's timeout. While the provider has no call in flight and none
// finishes, the estimate decays toward 0, "unknown", with time constant
// slidePeriod / 30, so a provider left alone because it was slow is tried
// again: one 50 ms slower than sub-millisecond peers about every 4 s with
// the default 30s. With calls in flight and none finishing it does not
// decay, and it is at least how long the oldest call in flight has waited
// (spi.Stats.OldestInFlight): a provider that stalls loses by its calls in
// flight and by their wait. A provider
// with no finished call is estimated 0 while nothing is in flight to it
// (it ties with the fastest and is tried), and the timeout while something
// is, so the callers do not pile onto it before its first answer; an
// invoker with nil Stats is estimated 0.
//
// Invokers with weight 0 are never picked; nil is returned when invokers
// is empty or every weight is 0. Select is O(n) and does not allocate
// while the provider list is unchanged (a provider seen for the first
// time allocates its estimate once; lists over 64 providers borrow a
// buffer from a sync.Pool).
func (b *Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	if b.apply {
		b.applyPeriod(invokers)
	}
	v := b.c.View(invokers)
	now := latency.Clock()
	b.rt.Prune(now)
	var (
		stack [scan]float64
		est   = stack[:]
	)
	if len(invokers) > scan {
		p := bufs.Get().(*[]float64)
		defer bufs.Put(p)
		if cap(*p) < len(invokers) {
			*p = make([]float64, len(invokers))
		}
		est = (*p)[:len(invokers)]
	}
	best := math.Inf(1)
	for i, x := range invokers {
		if v.Weight(i) == 0 {
			continue
		}
		est[i] = b.estimate(x, now)
		best = min(best, est[i])
	}
	if math.IsInf(best, 1) {
		return nil
	}
	limit := best * (1 + Tolerance)
	var (
		pick spi.Invoker
		tied int64
	)
	for i, x := range invokers {
		if wt := v.Weight(i); wt > 0 && est[i] <= limit {
			tied += wt
			if rand.Int64N(tied) < wt {
				pick = x
			}
		}
	}
	return pick
}

// estimate is x's estimate at now in nanoseconds (see Select), after
// taking in the calls its Stats finished since the last look.
func (b *Balancer) estimate(x spi.Invoker, now time.Duration) float64 {
	s := x.Stats()
	if s == nil {
		return float64(Floor)
	}
	e := b.rt.Read(s, now)
	active := max(s.Active(), 0)
	rt := e.value(now)
	switch {
	case !e.sampled && active > 0:
		rt = float64(b.rt.Penalty())
	case active > 0:
		// Calls in flight and none finished: not "no news" but answers
		// pending, so no decay, and a call in flight for longer than
		// the estimate counts as that slow already (a provider that
		// stalls loses by its calls in flight and by their age).
		rt = max(e.est, float64(s.OldestInFlight(now)))
	}
	return max(rt, float64(Floor)) * float64(active+1)
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

// UseLogger makes the balancer's warnings (malformed weight or warm-up
// values, a provider's clock ahead) go to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (b *Balancer) UseLogger(l *slog.Logger) { b.c.UseLogger(l) }

// Interface guards.
var (
	_ spi.LoadBalanceBuilder = Builder{}
	_ spi.LoadBalance        = (*Balancer)(nil)
	_ spi.LoggerUser         = (*Balancer)(nil)
)

package p2c

import (
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/airnode/airnode/extensions/lb/internal/latency"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "p2c"

// Builder builds power-of-two-choices balancers. The zero value is ready
// to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock,
// logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "p2c".
func (Builder) Name() string { return Name }

// Build validates p2c.decay (1ms..10m) and timeout (> 0) in u, the
// reference URL: a malformed or out-of-bounds value is a *spi.ParamError
// naming the key and the value. Pure: it reads no clock and starts
// nothing.
func (b Builder) Build(u spi.URL) (spi.LoadBalance, error) {
	p, err := parseParams(u)
	if err != nil {
		return nil, err
	}
	return &Balancer{c: warmup.NewCache(warmup.New(b.opts...)), p: p, rt: latency.NewTracker[PeakEWMA](PeakEWMA{Decay: p.decay}, p.penalty, max(10*p.decay, time.Minute))}, nil
}

// Balancer is a power-of-two-choices balancer over peak-EWMA latency
// estimates. Safe for concurrent use.
type Balancer struct {
	c  *warmup.Cache
	p  params
	rt *latency.Tracker[PeakEWMA, *PeakEWMA] // each provider's latency estimate
}

// Decay returns the time constant of the latency estimates (p2c.decay).
func (b *Balancer) Decay() time.Duration { return b.p.decay }

// Penalty returns the round trip a failed call counts as on top of its
// own (the reference's timeout, default 1s).
func (b *Balancer) Penalty() time.Duration { return b.p.penalty }

// Select draws two distinct providers at random, each with probability
// proportional to its effective weight (package warmup; uniformly when
// every weight is the same), and returns the one with the lower load
// score, the first drawn on a tie (Mitzenmacher's power of two choices
// over Finagle's peak-EWMA load):
//
//	score = latency estimate × (calls in flight + 1)
//
// The two are drawn independently; when both draws fall on the same
// provider, the second is drawn again among the others, and that
// candidate, which owes its place to the redraw and not to its weight,
// must win on load per unit of weight: the two scores are divided by
// the candidates' effective weights before they are compared. With equal
// weights nothing changes (a provider that is less loaded wins). With
// two providers it is what makes warm-up hold, since both are always
// candidates (without it, one at weight 1 of 100 got 50.3 % of the calls):
// the pair is drawn on the weights' merits in 2·p·(1-p) of the picks (p
// the lighter one's weight share), so the lighter one, if no faster, gets
// at most about twice its weight share, as with more providers: that much
// when it wins the pairs drawn on merit (fewer calls in flight under
// concurrent callers), less when its estimate is the higher one (two
// providers on loopback: weight 1 of 101 2.0 %; 10 of 110 14 % at c=8,
// random 9.1 %). A much slower heavy provider still loses to a fast light
// one in the redrawn pairs. Drawing with replacement would honour the
// weights too but leave the pick no choice whenever the draws coincide;
// dividing every comparison by the weights (Dubbo 3.2's
// AdaptiveLoadBalance) gave the same shares here but biases every pair
// against the lighter provider, which a lone caller then leaves idle.
//
// The latency estimate is a PeakEWMA fed, at each pick that draws the
// provider, with the mean round trip of the calls the provider's
// spi.Stats finished since the previous such pick, each failed call
// adding the penalty (Penalty), and, while calls are in flight, taken as
// at least the wait of the oldest of them (spi.Stats.OldestInFlight: a
// stalled provider, which finishes nothing, would else keep its last fast
// estimate until every caller waited on it). When the estimate is stale (no sample for
// PeakEWMA.StaleAfter, p2c.decay / 10) and the provider has no call in
// flight, it scores 0 in one pick, claimed under the estimate's mutex
// (PeakEWMA.Probe), at most once per StaleAfter: that probe's round trip
// replaces the estimate, so a provider left alone for being slow or
// failing is judged again on one call. A provider with no finished call
// yet scores 0 when it has no call in flight, so a new provider is tried at
// once, and penalty × calls in flight when it has some, so the callers do
// not pile onto it before its first answer (Finagle's rule); an invoker
// with nil Stats scores 0.
//
// One provider of positive weight is returned without scoring. Invokers
// with weight 0 are never picked; nil is returned when invokers is empty
// or every weight is 0. Select does not allocate while the provider list is
// unchanged (a new list is weighed once, see warmup.Cache; a provider seen
// for the first time allocates its estimate once).
func (b *Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	n := len(invokers)
	if n == 0 {
		return nil
	}
	v := b.c.View(invokers)
	i, j, redrawn := b.draw(invokers, v)
	switch {
	case i < 0:
		return nil
	case j < 0:
		return invokers[i]
	}
	now := latency.Clock()
	b.rt.Prune(now)
	li, lj := b.load(invokers[i], now), b.load(invokers[j], now)
	si, sj := li.score(lj), lj.score(li)
	if redrawn {
		// si/wi against sj/wj, multiplied out (both weights > 0).
		si, sj = si*float64(v.Weight(j)), sj*float64(v.Weight(i))
	}
	if sj < si {
		return invokers[j]
	}
	return invokers[i]
}

// draw returns the indexes of two distinct invokers of positive weight,
// drawn with probability proportional to their weights; j is -1 when only
// i has a positive weight, both are -1 when none has. redrawn is true
// when the weights differ and both draws fell on i, so that j was drawn
// again among the others.
func (b *Balancer) draw(invokers []spi.Invoker, v warmup.View) (i, j int, redrawn bool) {
	n := len(invokers)
	if wt, ok := v.Same(); ok {
		switch {
		case wt == 0:
			return -1, -1, false
		case n == 1:
			return 0, -1, false
		}
		i, j = rand.IntN(n), rand.IntN(n-1)
		if j >= i {
			j++
		}
		return i, j, false
	}
	total := v.Total()
	if total == 0 {
		return -1, -1, false
	}
	// Both candidates drawn independently, each a binary search of the
	// cached list's prefix sums (warmup.View.Pick, O(log n)); when they
	// fall on the same provider (probability Σ pₖ²) the second is drawn
	// again among the others, which gives exactly the distribution of
	// drawing without replacement: pᵢ·pⱼ/(1-pᵢ).
	i, j = v.Pick(rand.Int64N(total)), v.Pick(rand.Int64N(total))
	if i != j {
		return i, j, false
	}
	rest := total - v.Weight(i)
	if rest == 0 {
		return i, -1, false
	}
	return i, v.PickSkipping(rand.Int64N(rest), i), true
}

// load is what Select compares of one candidate (see score).
type load struct {
	fixed  bool    // the score is s, whatever the other candidate's estimate
	s      float64 // the fixed score, ns
	est    float64 // the latency estimate, ns
	oldest float64 // the wait of its oldest call in flight, ns (0: none)
	mult   float64 // calls in flight + 1
	pull   float64 // PeakEWMA.Rejoining: how much est is still pulled toward a peer's
	left   float64 // PeakEWMA.Left, ns: the most est is pulled up to
}

// score is l's load, in nanoseconds (see Select), against the other
// candidate o: a provider back on a probe's answer (pull > 0) counts its
// estimate as pulled toward o's, when o's is higher.
func (l load) score(o load) float64 {
	if l.fixed {
		return l.s
	}
	est := l.est
	if to := min(o.est, l.left); l.pull > 0 && !o.fixed && to > est {
		est += (to - est) * l.pull
	}
	return max(est, l.oldest) * l.mult
}

// load is x's load at now (see Select), after taking in the calls its
// Stats finished since the last look.
func (b *Balancer) load(x spi.Invoker, now time.Duration) load {
	s := x.Stats()
	if s == nil {
		return load{fixed: true}
	}
	e := b.rt.Read(s, now)
	active := float64(max(s.Active(), 0))
	switch {
	case !e.sampled:
		return load{fixed: true, s: float64(b.p.penalty) * active}
	case active == 0 && e.Stale(now) && b.rt.Probe(s, now):
		return load{fixed: true} // old news: one probe, judged on its answer
	case active == 0:
		return load{est: e.value(now), mult: 1, pull: e.Rejoining(now), left: float64(e.Left())}
	}
	// A call in flight for longer than the estimate is a slower sample
	// that has not come back yet: a stalled provider, whose estimate
	// only decays, would else win against peers whose last answer peaked
	// until every caller waited on it (tester62: 7 dead seconds).
	return load{est: e.value(now), oldest: float64(s.OldestInFlight(now)), mult: active + 1, pull: e.Rejoining(now), left: float64(e.Left())}
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

package p2c

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

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
	return &Balancer{c: warmup.NewCache(warmup.New(b.opts...)), p: p, keep: max(10*p.decay, time.Minute)}, nil
}

// Balancer is a power-of-two-choices balancer over peak-EWMA latency
// estimates. Safe for concurrent use.
type Balancer struct {
	c    *warmup.Cache
	p    params
	keep time.Duration // a provider's estimate unused this long is dropped

	peers     sync.Map     // *spi.Stats -> *peer
	nextPrune atomic.Int64 // clock() reading (ns) of the next pruning; 0 = unset
}

// peer is what the balancer knows of one provider: its latency estimate
// and the provider's Stats counters when the estimate last took them in.
type peer struct {
	mu      sync.Mutex
	ewma    PeakEWMA
	total   int64
	failed  int64
	elapsed time.Duration
	used    atomic.Int64 // clock() reading (ns) of the last pick that read it
}

// clockBase anchors the balancers' clock: time.Since of it reads only the
// monotonic clock.
var clockBase = time.Now()

func clock() time.Duration { return time.Since(clockBase) }

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
// The latency estimate is a PeakEWMA fed, at each pick that draws the
// provider, with the mean round trip of the calls the provider's
// spi.Stats finished since the previous such pick, each failed call
// adding the penalty (Penalty). A provider with no finished call yet
// scores 0 when it has no call in flight, so a new provider is tried at
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
	i, j := b.draw(invokers, v)
	switch {
	case i < 0:
		return nil
	case j < 0:
		return invokers[i]
	}
	now := clock()
	b.prune(now)
	if b.score(invokers[j], now) < b.score(invokers[i], now) {
		return invokers[j]
	}
	return invokers[i]
}

// draw returns the indexes of two distinct invokers of positive weight,
// drawn with probability proportional to their weights; j is -1 when only
// i has a positive weight, both are -1 when none has.
func (b *Balancer) draw(invokers []spi.Invoker, v warmup.View) (i, j int) {
	n := len(invokers)
	if wt, ok := v.Same(); ok {
		switch {
		case wt == 0:
			return -1, -1
		case n == 1:
			return 0, -1
		}
		i, j = rand.IntN(n), rand.IntN(n-1)
		if j >= i {
			j++
		}
		return i, j
	}
	total := v.Total()
	if total == 0 {
		return -1, -1
	}
	// Both candidates drawn independently, each a binary search of the
	// cached list's prefix sums (warmup.View.Pick, O(log n)); when they
	// fall on the same provider (probability Σ pₖ², 10 % for ten equal
	// weights) the second is drawn again among the others, which gives
	// exactly the distribution of drawing without replacement:
	// pᵢ·pⱼ/(1-pᵢ).
	i, j = v.Pick(rand.Int64N(total)), v.Pick(rand.Int64N(total))
	if i != j {
		return i, j
	}
	rest := total - v.Weight(i)
	if rest == 0 {
		return i, -1
	}
	return i, v.PickSkipping(rand.Int64N(rest), i)
}

// score is x's load at now, in nanoseconds (see Select), after taking in
// the calls its Stats finished since the last look.
func (b *Balancer) score(x spi.Invoker, now time.Duration) float64 {
	s := x.Stats()
	if s == nil {
		return 0
	}
	p := b.peer(s, now)
	p.mu.Lock()
	b.observe(p, s, now)
	est, sampled := p.ewma.value(now), p.ewma.sampled
	p.mu.Unlock()
	active := float64(max(s.Active(), 0))
	if !sampled {
		return float64(b.p.penalty) * active
	}
	return est * (active + 1)
}

// observe feeds p's estimate with the mean round trip of the calls s
// finished since p last looked, each failed call adding the penalty.
// Called with p.mu held.
//
// Stats' counters are separate atomics, so a call finishing while they
// are read may be counted in total before its elapsed time: its time then
// joins the next sample. Nothing is lost, only moved by one sample.
func (b *Balancer) observe(p *peer, s *spi.Stats, now time.Duration) {
	total := s.Total()
	dt := total - p.total
	if dt <= 0 {
		return
	}
	elapsed, failed := s.Elapsed(), s.Failed()
	df := max(failed-p.failed, 0)
	sum := float64(elapsed-p.elapsed) + float64(df)*float64(b.p.penalty)
	rtt := time.Duration(min(sum/float64(dt), math.MaxInt64/2))
	p.ewma.Observe(now, rtt)
	p.total, p.failed, p.elapsed = total, failed, elapsed
}

// peer returns the estimate of the provider whose Stats are s, creating it
// the first time. A new estimate starts from zero counters, so its first
// sample is the mean of every call s has recorded.
func (b *Balancer) peer(s *spi.Stats, now time.Duration) *peer {
	var p *peer
	if v, ok := b.peers.Load(s); ok {
		p = v.(*peer)
	} else {
		v, _ := b.peers.LoadOrStore(s, &peer{ewma: PeakEWMA{Decay: b.p.decay}})
		p = v.(*peer)
	}
	p.used.Store(int64(now))
	return p
}

// prune drops, at most once per keep, the estimates of providers no pick
// has read for keep (10 × p2c.decay, at least a minute): providers that
// left the directory. A provider that comes back starts afresh from its
// Stats.
func (b *Balancer) prune(now time.Duration) {
	next := b.nextPrune.Load()
	if next == 0 {
		b.nextPrune.CompareAndSwap(0, int64(now+b.keep))
		return
	}
	if int64(now) < next || !b.nextPrune.CompareAndSwap(next, int64(now+b.keep)) {
		return
	}
	b.peers.Range(func(k, v any) bool {
		if now-time.Duration(v.(*peer).used.Load()) > b.keep {
			b.peers.CompareAndDelete(k, v)
		}
		return true
	})
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

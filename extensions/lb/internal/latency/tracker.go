package latency

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/spi"
)

// Clock returns the time on spi.Mono's clock, the one Tracker reads are
// stamped with and spi.Stats.OldestInFlight takes.
func Clock() time.Duration { return spi.Mono() }

// Estimator is a latency estimate a Tracker keeps: Observe adds the mean
// round trip of the calls a provider finished since the previous sample,
// at now. The Tracker serializes the calls.
type Estimator interface {
	Observe(now, rtt time.Duration)
}

// FailureEstimator is an Estimator that weighs a sample by whether it
// holds a failed call: the Tracker calls ObserveFailed instead of Observe,
// failed reporting whether any of the calls in the sample failed (its rtt
// then includes the penalty).
type FailureEstimator interface {
	Estimator
	ObserveFailed(now, rtt time.Duration, failed bool)
}

// Tracker keeps one estimate E per provider a balancer reads, keyed by the
// provider's *spi.Stats. Each Read feeds the provider's estimate with the
// mean round trip of the calls its Stats finished since the previous Read,
// each failed call adding the penalty; an estimate no Read has touched for
// keep is dropped by Prune, and starts afresh from the Stats if the
// provider comes back. Safe for concurrent use; a Read holds a
// per-provider mutex for a few arithmetic steps and allocates only the
// first time it sees a provider.
type Tracker[E any, PE interface {
	*E
	Estimator
}] struct {
	init    E // what a new provider's estimate starts as
	penalty time.Duration
	keep    time.Duration // an estimate unused this long is dropped

	peers     sync.Map     // *spi.Stats -> *peer[E]
	nextPrune atomic.Int64 // Clock() reading (ns) of the next pruning; 0 = unset
}

// NewTracker returns a Tracker whose new estimates start as init, which
// counts a failed call as its round trip plus penalty, and which drops
// the estimate of a provider no Read has touched for keep.
func NewTracker[E any, PE interface {
	*E
	Estimator
}](init E, penalty, keep time.Duration) *Tracker[E, PE] {
	return &Tracker[E, PE]{init: init, penalty: penalty, keep: keep}
}

// peer is what the tracker knows of one provider: its estimate and the
// provider's Stats counters when the estimate last took them in.
type peer[E any] struct {
	mu      sync.Mutex
	est     E
	total   int64
	failed  int64
	elapsed time.Duration
	used    atomic.Int64 // Clock() reading (ns) of the last Read
}

// Read takes in the calls s finished since the last Read of s and returns
// a copy of the provider's estimate.
//
// Stats' counters are separate atomics, so a call finishing while they
// are read may be counted in total before its elapsed time: its time then
// joins the next sample. Nothing is lost, only moved by one sample.
func (t *Tracker[E, PE]) Read(s *spi.Stats, now time.Duration) E {
	p := t.peer(s, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	if total := s.Total(); total > p.total {
		dt := total - p.total
		elapsed, failed := s.Elapsed(), s.Failed()
		df := max(failed-p.failed, 0)
		sum := float64(elapsed-p.elapsed) + float64(df)*float64(t.penalty)
		rtt := time.Duration(min(sum/float64(dt), math.MaxInt64/2))
		if f, ok := any(PE(&p.est)).(FailureEstimator); ok {
			f.ObserveFailed(now, rtt, df > 0)
		} else {
			PE(&p.est).Observe(now, rtt)
		}
		p.total, p.failed, p.elapsed = total, failed, elapsed
	}
	return p.est
}

// Prober is an Estimator that can tell when its estimate is stale and
// claim a probe of the provider: Probe reports whether the estimate is
// stale at now and, if so, records the claim, so that it is not stale
// again before a sample or its staleness period.
type Prober interface {
	Probe(now time.Duration) bool
}

// Probe calls Probe, under the provider's mutex, on the estimate of the
// provider whose Stats are s: of concurrent callers that see it stale,
// one gets true. It is false when E is not a Prober, or s has no estimate
// yet (no Read).
func (t *Tracker[E, PE]) Probe(s *spi.Stats, now time.Duration) bool {
	v, ok := t.peers.Load(s)
	if !ok {
		return false
	}
	p := v.(*peer[E])
	pr, ok := any(PE(&p.est)).(Prober)
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return pr.Probe(now)
}

// Penalty returns what a failed call adds to its round trip.
func (t *Tracker[E, PE]) Penalty() time.Duration { return t.penalty }

// peer returns the estimate of the provider whose Stats are s, creating it
// the first time. A new estimate starts from zero counters, so its first
// sample is the mean of every call s has recorded.
func (t *Tracker[E, PE]) peer(s *spi.Stats, now time.Duration) *peer[E] {
	var p *peer[E]
	if v, ok := t.peers.Load(s); ok {
		p = v.(*peer[E])
	} else {
		v, _ := t.peers.LoadOrStore(s, &peer[E]{est: t.init})
		p = v.(*peer[E])
	}
	p.used.Store(int64(now))
	return p
}

// Prune drops, at most once per keep, the estimates of providers no Read
// has touched for keep: providers that left the directory. Balancers call it once per pick; it costs one
// atomic load in between.
func (t *Tracker[E, PE]) Prune(now time.Duration) {
	next := t.nextPrune.Load()
	if next == 0 {
		t.nextPrune.CompareAndSwap(0, int64(now+t.keep))
		return
	}
	if int64(now) < next || !t.nextPrune.CompareAndSwap(next, int64(now+t.keep)) {
		return
	}
	t.peers.Range(func(k, v any) bool {
		if now-time.Duration(v.(*peer[E]).used.Load()) > t.keep {
			t.peers.CompareAndDelete(k, v)
		}
		return true
	})
}

// KeyTimeout is the kernel's call timeout, which the latency-aware
// balancers read (and do not declare: the kernel does) as the penalty of a
// failed call; DefaultPenalty, the kernel's default timeout, applies when
// the reference sets none.
const (
	KeyTimeout     = "timeout"
	DefaultPenalty = time.Second
)

// Penalty reads the penalty of a failed call, the reference's timeout
// (> 0, default DefaultPenalty), from u; a malformed or non-positive value
// is a *spi.ParamError naming the key and the value.
func Penalty(u spi.URL) (time.Duration, error) {
	p, err := u.Duration(KeyTimeout, DefaultPenalty)
	if err != nil {
		return 0, err
	}
	if p <= 0 {
		v, _ := u.Param(KeyTimeout)
		return 0, &spi.ParamError{Key: KeyTimeout, Value: v, Want: "a positive duration such as 1s"}
	}
	return p, nil
}

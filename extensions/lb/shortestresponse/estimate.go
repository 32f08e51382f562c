package shortestresponse

import (
	"math"
	"time"
)

// Weight is the least weight a new sample has in a provider's
// response-time estimate: each answered call moves it at least 1/8 of the
// way to its own time.
const Weight = 1.0 / 8

// recent is a provider's expected response time: an exponentially
// weighted mean of its recent samples that decays toward 0 ("unknown")
// while no sample comes. A sample x at time t, Δt after the previous one,
// moves the estimate e (decayed to t) to
//
//	e + a·(x - e),  a = max(Weight, 1 - e^(-Δt/tau))
//
// At high call rates a is Weight and one sample raises e by at most
// max(e, Floor): a provider that turns 50 ms slower than
// sub-millisecond peers loses the lead on its second slow answer, while
// a single hiccup (a GC pause, a descheduled thread) does not make it
// lose. After a pause (a > Weight) the bound widens with the square of
// (1-Weight)/w, w = e^(-Δt/tau): 1 where a reaches Weight, about 5.7
// after one time constant, nothing left after three; when the decayed
// estimate says little a sample counts for nearly all, so a provider
// tried again after being left alone (4 s at the default) is judged on
// that call. The bound once stopped at a = Weight (a pause of 133 ms at
// the default): a provider not called for 140 ms whose next call met a
// 133 ms stall of a loaded machine was estimated 18 ms and left out for
// 3 s, and one of four equal providers took 81 % of the calls at load
// 10-16. A failure after a pause still counts whole. The first sample of successful calls
// counts as one at a high call rate from an estimate of 0: Weight of it,
// at most Floor, so a
// new provider whose first answer was slow (its first call, a cold
// cache, a stall on a loaded machine) still ties with sub-millisecond
// peers, and loses on its second slow answer as any provider does. Taken
// as it was, one 50 ms first answer kept a provider out for about 4 s
// (the estimate's decay from 50 ms to the tie, time constant 1 s): 1 of
// 3,000 calls at c=1 next to an equal provider (tester82 #3).
// Times are offsets on the balancer's clock; not safe for concurrent use
// (latency.Tracker serializes it).
type recent struct {
	tau     time.Duration // time constant of the decay (> 0)
	est     float64       // ns, at stamp
	stamp   time.Duration
	sampled bool
}

// Observe adds a round trip rtt (negative counts as 0) of successful
// calls measured at now; a now before the previous sample's counts as the
// same instant.
func (r *recent) Observe(now, rtt time.Duration) { r.ObserveFailed(now, rtt, false) }

// ObserveFailed is Observe of a sample that holds a failed call when
// failed (latency.FailureEstimator): a first sample with a failure is
// taken as it is, a failure being no hiccup.
func (r *recent) ObserveFailed(now, rtt time.Duration, failed bool) {
	x := float64(max(rtt, 0))
	if !r.sampled {
		if !failed {
			x = min(x*Weight, float64(Floor))
		}
		r.est, r.stamp, r.sampled = x, now, true
		return
	}
	w := r.decay(now)
	e := r.est * w
	a := 1 - w
	rise := max(e, float64(Floor)) // the most one answer may raise e by
	switch {
	case a < Weight:
		a = Weight
	case failed:
		rise = math.Inf(1) // a failure is no hiccup
	default:
		// After a pause the bound widens with the square of
		// (1-Weight)/w: 1 at a = Weight (no jump where Weight stops
		// being the floor of a), nothing once the estimate has faded.
		g := (1 - Weight) / w
		rise *= g * g
	}
	x = min(x, e+rise/a)
	r.est = e + a*(x-e)
	r.stamp = max(r.stamp, now)
}

// value is the estimate at now in nanoseconds: 0 before the first sample,
// then the estimate decayed by e^(-(now-last sample)/tau).
func (r *recent) value(now time.Duration) float64 { return r.est * r.decay(now) }

// decay is e^(-(now-stamp)/tau), 1 for now <= stamp.
func (r *recent) decay(now time.Duration) float64 {
	dt := now - r.stamp
	if dt <= 0 {
		return 1
	}
	return math.Exp(-float64(dt) / float64(r.tau))
}

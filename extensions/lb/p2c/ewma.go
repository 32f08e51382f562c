package p2c

import (
	"math"
	"time"
)

// PeakEWMA is a peak-sensitive exponentially weighted moving average of a
// round-trip time, the latency estimate of Finagle's PeakEwma balancer
// (also linkerd's): a sample slower than the estimate replaces it at once;
// a faster one pulls it down with time constant Decay, weighted by the
// time since the previous sample (1 - e^(-Δt/Decay)), so a burst of fast
// samples moves it no more than one sample after the same pause; and while
// no sample comes the estimate read decays toward 0 with the same time
// constant (Finagle reads its estimate so), so a provider left alone
// because it was slow is tried again later.
//
// An estimate no sample has borne out (come within half of it) for
// StaleAfter (Decay / 10) is stale: what it says is old news. The balancer then sends the provider one probe
// (Probe claims it), and the sample after a probe replaces the estimate,
// as the first one did. A provider left alone after its calls
// timed out is thus judged again on one call about every StaleAfter, and
// taken back as soon as that call is fast, instead of waiting until the
// decay has brought a multi-second estimate down to its peers' (about
// 40 s after a 6 s hang); Finagle reaches the same end through failure accrual's
// probation, Envoy through outlier ejection's timed return.
//
// Times are offsets on one monotonic clock chosen by the caller (the
// balancer uses the time since it was built; tests inject any), so the
// average never reads a clock itself. Not safe for concurrent use: the
// balancer guards each one with a mutex. The zero value has no sample and
// a Decay of 0, which makes every sample replace the estimate.
type PeakEWMA struct {
	// Decay is the time constant, set before first use.
	Decay time.Duration

	cost    float64       // ns, at stamp
	stamp   time.Duration // when cost was last updated
	held    time.Duration // when a sample last bore the estimate out (see Stale)
	probed  time.Duration // when Probe last claimed a probe
	probing bool          // a probe was claimed since the last sample
	sampled bool
	// rejoined is when a probe's answer replaced the estimate (rejoin
	// set): the provider was left alone, and is back on one sample.
	rejoined time.Duration
	rejoin   bool
	left     float64 // ns: the estimate the probe's answer replaced, decayed to rejoined
}

// StaleAfter is Decay / 10: an estimate no sample has borne out for that
// long is stale (1 s with p2c's default decay of 10s).
func (e *PeakEWMA) StaleAfter() time.Duration { return e.Decay / 10 }

// Held is how close to the estimate a sample must come to bear it out:
// a sample of at least Held × the estimate (a peak, which replaces it,
// included) keeps the estimate from going stale.
const Held = 0.5

// Stale reports whether the estimate has had a sample, but none for
// StaleAfter before now that bore it out (at least Held × the estimate),
// and no probe was claimed within StaleAfter either. So an estimate goes
// stale both when its provider gets no call and when its calls all
// answer in under half of it: a provider back from a stall that still
// gets a trickle of calls (its peers' peaks and calls in flight weigh as
// much as the stall's answers) is probed, not held to the stall's
// multi-second round trips until the decay wears them off (tens of
// seconds: a provider faster than its peers got 2 % of the calls, at
// load 20).
func (e *PeakEWMA) Stale(now time.Duration) bool {
	return e.sampled && now-max(e.held, e.probed) >= e.StaleAfter()
}

// Probe claims a probe of a stale estimate: it reports whether the
// estimate is Stale at now and, if so, records now, so that it is not
// stale again before a sample or another StaleAfter, and makes the next
// sample replace the estimate. Of concurrent callers (serialized by the
// caller's mutex) one gets true.
func (e *PeakEWMA) Probe(now time.Duration) bool {
	if !e.Stale(now) {
		return false
	}
	e.probed, e.probing = now, true
	return true
}

// Observe adds a round trip rtt (negative counts as 0) measured at now.
// A now before the previous sample's counts as the same instant. The
// first sample, one slower than the estimate, and the first after a
// Probe replace the estimate.
func (e *PeakEWMA) Observe(now, rtt time.Duration) {
	x := float64(max(rtt, 0))
	if e.sampled && e.probing {
		e.rejoined, e.rejoin, e.left = now, true, e.value(now)
	}
	if !e.sampled || e.probing || x >= Held*e.cost {
		e.held = max(e.held, now)
	}
	switch {
	case !e.sampled || x >= e.cost || e.probing:
		e.cost = x // first sample, a peak, or a probe's answer: taken at once
	default:
		w := e.weight(now)
		e.cost = e.cost*w + x*(1-w)
	}
	if !e.sampled || now > e.stamp {
		e.stamp = now
	}
	e.sampled, e.probing = true, false
}

// Rejoining returns how much a returning provider's estimate should still
// be pulled toward its peers' at now: e^(-(now-r)/Decay), r the time a
// probe's answer replaced the estimate (the provider had been left alone,
// and its estimate is one call's round trip, unloaded, against peers'
// estimates that hold the peaks of the load it left them); 0 when no
// probe's answer has, or with a Decay of 0. The balancer compares such a
// provider as if its estimate were est + (peer - est) × Rejoining, when
// the peer's is higher: it starts at its peer's and gets its own back
// with the time constant the peers' peaks decay with (tester67 #7).
func (e *PeakEWMA) Rejoining(now time.Duration) float64 {
	if !e.rejoin || e.Decay <= 0 {
		return 0
	}
	dt := now - e.rejoined
	if dt <= 0 {
		return 1
	}
	return math.Exp(-float64(dt) / float64(e.Decay))
}

// Left returns the estimate a probe's answer replaced (the provider's
// when it was left alone, decayed to that answer), 0 when no probe's
// answer has: how far Rejoining may pull the estimate up. A probe that
// answered fast never makes the provider look worse than before it: a
// peer's estimate holding a failing provider's multi-second round trips
// would otherwise pull a healthy provider, probed after a peak of its
// own went unconfirmed (see Stale), up to the failing one's.
func (e *PeakEWMA) Left() time.Duration {
	if !e.rejoin {
		return 0
	}
	return time.Duration(e.left)
}

// Value returns the estimate at now: the average after the last sample
// decayed toward 0 by e^(-(now-last)/Decay); ok is false, and the value
// 0, before the first sample.
func (e *PeakEWMA) Value(now time.Duration) (est time.Duration, ok bool) {
	if !e.sampled {
		return 0, false
	}
	return time.Duration(e.value(now)), true
}

// value is Value in nanoseconds, as a float.
func (e *PeakEWMA) value(now time.Duration) float64 { return e.cost * e.weight(now) }

// weight is e^(-(now-stamp)/Decay): 1 at the last sample, toward 0 after.
func (e *PeakEWMA) weight(now time.Duration) float64 {
	dt := now - e.stamp
	if dt <= 0 {
		return 1
	}
	if e.Decay <= 0 {
		return 0
	}
	return math.Exp(-float64(dt) / float64(e.Decay))
}

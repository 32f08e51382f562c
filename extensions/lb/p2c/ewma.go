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
	sampled bool
}

// Observe adds a round trip rtt (negative counts as 0) measured at now.
// A now before the previous sample's counts as the same instant.
func (e *PeakEWMA) Observe(now, rtt time.Duration) {
	x := float64(max(rtt, 0))
	switch {
	case !e.sampled || x >= e.cost:
		e.cost = x // first sample, or a peak: taken at once
	default:
		w := e.weight(now)
		e.cost = e.cost*w + x*(1-w)
	}
	if !e.sampled || now > e.stamp {
		e.stamp = now
	}
	e.sampled = true
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

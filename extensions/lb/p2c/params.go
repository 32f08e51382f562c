package p2c

import (
	"time"

	"github.com/airnode/airnode/extensions/lb/internal/latency"
	"github.com/airnode/airnode/spi"
)

// URL keys of the reference and their defaults.
const (
	// KeyDecay is the time constant of each provider's latency estimate
	// (PeakEWMA.Decay), a duration from MinDecay to MaxDecay.
	KeyDecay = "p2c.decay"
	// DefaultDecay is Finagle's and linkerd's default decay.
	DefaultDecay = 10 * time.Second
	MinDecay     = time.Millisecond
	MaxDecay     = 10 * time.Minute

	// KeyTimeout is the kernel's call timeout, which p2c reads (and does
	// not declare: the kernel does) as the penalty of a failed call.
	KeyTimeout = latency.KeyTimeout
	// DefaultPenalty is the penalty when the reference sets no timeout:
	// the kernel's default timeout.
	DefaultPenalty = latency.DefaultPenalty
)

// params are the reference's settings of one balancer.
type params struct {
	decay   time.Duration
	penalty time.Duration
}

// parseParams reads p2c.decay and timeout from the reference URL u; a
// malformed or out-of-bounds value is a *spi.ParamError naming key and
// value.
func parseParams(u spi.URL) (params, error) {
	d, err := u.Duration(KeyDecay, DefaultDecay)
	if err != nil {
		return params{}, err
	}
	if d < MinDecay || d > MaxDecay {
		v, _ := u.Param(KeyDecay)
		return params{}, &spi.ParamError{Key: KeyDecay, Value: v, Want: "a duration from 1ms to 10m such as 10s"}
	}
	p, err := latency.Penalty(u)
	if err != nil {
		return params{}, err
	}
	return params{decay: d, penalty: p}, nil
}

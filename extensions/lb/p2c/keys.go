package p2c

import (
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys the balancer reads (spi.KeyDescriber): the
// reference's p2c.decay, then the provider keys that weigh the draw of the
// two candidates (package warmup). The reference's timeout, which sets the
// penalty of a failed call, is the kernel's key and declared there.
func (Builder) Keys() []spi.KeyDoc {
	ks := warmup.Keys()
	for i := range ks {
		ks[i].Doc += "; p2c draws its two candidates by it, then takes the less loaded (latency × calls in flight; loads divided by it only when both draws fell on one provider), so it sets the odds, not the shares: two providers as fast at weights 100 and 300 split about 40:60, not 25:75 (random, roundrobin), a lighter one gets at most about twice its weight share, and a slower one less, whatever its weight"
	}
	return append([]spi.KeyDoc{
		{Key: KeyDecay, Type: spi.KeyTypeDuration, Default: "10s", Doc: "time constant of each provider's peak-EWMA latency estimate: how fast it forgets a slow or failed call; a provider with no answer for a tenth of it gets one probe call, whose round trip replaces its estimate; 1ms..10m"},
	}, ks...)
}

var _ spi.KeyDescriber = Builder{}

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
		ks[i].Doc += "; p2c draws its two candidates by it, and divides their loads by it when both draws fell on one and the second was drawn again (always possible with two providers)"
	}
	return append([]spi.KeyDoc{
		{Key: KeyDecay, Type: spi.KeyTypeDuration, Default: "10s", Doc: "time constant of each provider's peak-EWMA latency estimate: how fast it forgets a slow or failed call; a provider with no answer for a tenth of it gets one probe call, whose round trip replaces its estimate; 1ms..10m"},
	}, ks...)
}

var _ spi.KeyDescriber = Builder{}

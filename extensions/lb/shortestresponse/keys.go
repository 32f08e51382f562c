package shortestresponse

import (
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys the balancer reads (spi.KeyDescriber): the
// reference's shortestresponse.slidePeriod, then the provider keys it
// breaks ties by (package warmup). The reference's timeout, which sets the
// penalty of a failed call, is the kernel's key and declared there.
func (Builder) Keys() []spi.KeyDoc {
	return append([]spi.KeyDoc{
		{Key: KeySlidePeriod, Type: spi.KeyTypeDuration, Default: "30s", Doc: "how fast a provider's expected response time is forgotten: while it gets no answer it decays toward unknown with time constant slidePeriod/30, so a provider avoided for being slow is tried again within seconds (about 4s with the default, for one 50ms slower than its peers); > 0"},
	}, warmup.TieBreakKeys()...)
}

var _ spi.KeyDescriber = Builder{}

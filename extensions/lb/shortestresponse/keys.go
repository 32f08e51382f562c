package shortestresponse

import (
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys the balancer reads (spi.KeyDescriber): the
// reference's shortestresponse.slidePeriod, then the provider keys it
// breaks ties by (package warmup).
func (Builder) Keys() []spi.KeyDoc {
	return append([]spi.KeyDoc{
		{Key: KeySlidePeriod, Type: spi.KeyTypeDuration, Default: "30s", Doc: "window of the mean response time each provider is judged by, > 0"},
	}, warmup.TieBreakKeys()...)
}

var _ spi.KeyDescriber = Builder{}

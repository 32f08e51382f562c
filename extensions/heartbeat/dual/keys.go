package dual

import (
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		hbparams.IntervalKey("both sides: a ping when nothing was read or written for this long"),
		hbparams.PingOnTimeoutKey(", at most heartbeat.interval,"),
		{Key: hbparams.KeyTimeout, Type: spi.KeyTypeDuration, Doc: "read silence before the consumer reconnects or the provider closes, >= 2 × heartbeat.interval; default 3 × heartbeat.interval"},
	}
}

var _ spi.KeyDescriber = Builder{}

package idle

import (
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		hbparams.IntervalKey("consumer: read-idle time before a ping, and the ping period"),
		{Key: hbparams.KeyPingTimeout, Type: spi.KeyTypeDuration, Doc: "consumer: how long a ping may wait for its answer, > 0; default heartbeat.interval"},
		{Key: hbparams.KeyRetries, Type: spi.KeyTypeInt, Default: "3", Doc: "consumer: failed pings in a row before it reconnects, from 1 to 1000"},
		hbparams.PingOnTimeoutKey(", at most heartbeat.ping.timeout,"),
		{Key: hbparams.KeyTimeout, Type: spi.KeyTypeDuration, Doc: "provider: closes a channel with nothing read or written for this long, > heartbeat.interval; default 3 × heartbeat.interval + 20s"},
	}
}

var _ spi.KeyDescriber = Builder{}

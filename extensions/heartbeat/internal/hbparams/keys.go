package hbparams

import "github.com/airnode/airnode/spi"

// IntervalKey describes heartbeat.interval for the strategies reading it
// (Interval) to declare (spi.KeyDescriber). Dubbo's bare form
// heartbeat=3000 is the "heartbeat" point key's, described by the catalog.
func IntervalKey(doc string) spi.KeyDoc {
	return spi.KeyDoc{Key: KeyInterval, Type: spi.KeyTypeDuration, Default: "60s", Doc: doc + ", from 10ms to 24h"}
}

// PingOnTimeoutKey describes heartbeat.ping.on.timeout for the strategies
// reading it (PingOnTimeout); capped says what bounds the check's ping
// beyond max(1s, timeout) ("" for nothing).
func PingOnTimeoutKey(capped string) spi.KeyDoc {
	return spi.KeyDoc{Key: KeyPingOnTimeout, Type: spi.KeyTypeBool, Default: "true",
		Doc: "consumer: a call timing out with nothing read since it was sent makes the consumer ping at once; no answer within max(1s, timeout)" + capped + " closes the connection"}
}

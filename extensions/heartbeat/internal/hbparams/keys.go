package hbparams

import "github.com/airnode/airnode/spi"

// IntervalKey describes heartbeat.interval for the strategies reading it
// (Interval) to declare (spi.KeyDescriber). Dubbo's bare form
// heartbeat=3000 is the "heartbeat" point key's, described by the catalog.
func IntervalKey(doc string) spi.KeyDoc {
	return spi.KeyDoc{Key: KeyInterval, Type: spi.KeyTypeDuration, Default: "60s", Doc: doc + ", 10ms..24h"}
}

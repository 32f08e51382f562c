package staticregistry

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber). Served as a
// plugin, the sdk sends them to the host at start, so `airnode list
// --keys` shows them as it shows a bundled extension's.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "interval", Type: spi.KeyTypeDuration, Default: "500ms", Doc: "how often the file is re-read, 10ms..1h"},
	}
}

var _ spi.KeyDescriber = Builder{}

package p2c

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys the balancer reads (spi.KeyDescriber): the
// provider's "weight", read from each provider URL at Select, the kernel's
// own key declared with the kernel's type (int), as `airnode plugin check`
// accepts. Served as a plugin, the sdk sends them to the host at start, so
// `airnode list --keys` shows them and the typo warnings count them.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "weight", Type: spi.KeyTypeInt, Default: "100", Doc: "provider weight, read from each provider URL; <= 0 (or malformed) excludes the provider, any positive weight counts alike"},
	}
}

var _ spi.KeyDescriber = Builder{}

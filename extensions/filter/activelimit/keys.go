package activelimit

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber). timeout is
// the kernel's call timeout, read here as the longest wait for a slot.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: Key, Type: spi.KeyTypeInt, Default: "0", Doc: "activates the filter: calls of a method in flight to each provider, 0..1048576, 0: no limit; method-level allowed"},
		{Key: "timeout", Type: spi.KeyTypeDuration, Default: "1000ms", Doc: "longest wait for a slot (the call timeout), then CLIENT_TIMEOUT; method-level allowed"},
	}
}

var _ spi.KeyDescriber = Builder{}

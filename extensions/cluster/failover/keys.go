package failover

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyRetries, Type: spi.KeyTypeInt, Default: "2", Doc: "extra attempts on another provider after a failure that left the request unprocessed, 0..100; a provider's value is its consumers' default; method-level allowed"},
		{Key: KeyIdempotent, Type: spi.KeyTypeBool, Default: "false", Doc: "the method may run twice, so SERVER_TIMEOUT, SERVER_ERROR and CHANNEL_INACTIVE after sending are retried too; a provider's value is its consumers' default; method-level allowed"},
	}
}

var _ spi.KeyDescriber = Builder{}

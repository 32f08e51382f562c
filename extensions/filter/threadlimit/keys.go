package threadlimit

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (*Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: Key, Type: spi.KeyTypeInt, Doc: "activates the filter: calls running at once on the provider address, over all its services, 1..1048576; beyond: SERVER_THREADPOOL_EXHAUSTED"},
	}
}

var _ spi.KeyDescriber = (*Builder)(nil)

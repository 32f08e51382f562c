package executelimit

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: Key, Type: spi.KeyTypeInt, Default: "0", Doc: "activates the filter: calls of a method running at once on the export, 0..1048576, 0: no limit; beyond: SERVER_THREADPOOL_EXHAUSTED; method-level allowed"},
	}
}

var _ spi.KeyDescriber = Builder{}

package forking

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyForks, Type: spi.KeyTypeInt, Default: "2", Doc: "providers called in parallel, the first success wins, 1..100; a provider's value is its consumers' default; method-level allowed"},
	}
}

var _ spi.KeyDescriber = Builder{}

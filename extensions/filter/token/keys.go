package token

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: Key, Type: spi.KeyTypeString, Secret: true, Doc: "activates the filter: the shared secret; true: a random one made at export and published; false: off; not empty"},
	}
}

var _ spi.KeyDescriber = Builder{}

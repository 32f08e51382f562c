package file

import "github.com/airnode/airnode/spi"

// Keys describes the registry URL's keys Build reads (spi.KeyDescriber);
// the directory is the URL's path, not a key.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyPoll, Type: spi.KeyTypeDuration, Default: "500ms", Doc: "lock-state poll period per subscription (a crashed provider's entry goes within it), 10ms..1m"},
	}
}

var _ spi.KeyDescriber = Builder{}

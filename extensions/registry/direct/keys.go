package direct

import "github.com/airnode/airnode/spi"

// Keys describes the URL keys Build reads (spi.KeyDescriber); the
// providers' addresses are the URL's hosts.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyProtocol, Type: spi.KeyTypeString, Default: DefaultProtocol, Doc: "scheme of the provider URLs, for direct:// URLs only; not empty"},
		{Key: spi.KeyBackup, Type: spi.KeyTypeHosts, Doc: "more provider addresses, h:p,h:p (Dubbo's form)"},
	}
}

var _ spi.KeyDescriber = Builder{}

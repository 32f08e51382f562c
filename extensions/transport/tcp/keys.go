package tcp

import (
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys Build reads (spi.KeyDescriber): the TLS
// keys.
func (Builder) Keys() []spi.KeyDoc { return tlsconf.Keys() }

var _ spi.KeyDescriber = Builder{}

package smux

import (
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/spi"
)

// Keys describes the URL keys Build reads (spi.KeyDescriber): smux.buffer
// and the TLS keys.
func (Builder) Keys() []spi.KeyDoc {
	return append([]spi.KeyDoc{
		{Key: KeyBuffer, Type: spi.KeyTypeSize, Default: "8MiB", Doc: "receive buffer per session, bytes, 256KiB..1GiB; each stream's window is a quarter of it"},
	}, tlsconf.Keys()...)
}

var _ spi.KeyDescriber = Builder{}

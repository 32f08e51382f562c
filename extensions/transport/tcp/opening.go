package tcp

import (
	"encoding/binary"

	"github.com/airnode/airnode/spi"
)

// Wire-format facts RecognizesOpening checks (DESIGN §5; the exchange's
// protocol package has them too, which an extension does not import).
const (
	magicHigh, magicLow = 0xA1, 0x7E
	flagRequest         = 0x80
	headerLen           = 16
	// openingMaxBody bounds the body a consumer's first frame may declare:
	// the default payload limit, 8 MiB (a Go consumer's first frame is its
	// first ping, whose body is a short hello).
	openingMaxBody = 8 << 20
)

// RecognizesOpening reports whether first, a connection's first bytes,
// is how a consumer of this transport opens a connection
// (spi.OpeningRecognizer): an airnode frame header (magic 0xA1 0x7E, the
// exchange's frames travel on the connection itself) of a request (flag
// 0x80: a Go consumer's first ping, flags 0xE0) with status 0, a request
// id other than 0 and a body of at most 8 MiB. A provider serving smux
// reads these bytes from a consumer whose URL key transport is tcp and
// reports a transport mismatch at Info, not a protocol error. Fewer than
// 16 bytes are never recognized.
func (Builder) RecognizesOpening(first []byte) bool {
	if len(first) < headerLen || first[0] != magicHigh || first[1] != magicLow {
		return false
	}
	return first[2]&flagRequest != 0 && first[3] == 0 &&
		binary.BigEndian.Uint64(first[4:12]) != 0 && binary.BigEndian.Uint32(first[12:16]) <= openingMaxBody
}

var _ spi.OpeningRecognizer = Builder{}

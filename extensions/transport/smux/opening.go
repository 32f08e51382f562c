package smux

import (
	"encoding/binary"

	"github.com/airnode/airnode/spi"
)

// RecognizesOpening reports whether first, a connection's first bytes,
// is how a consumer of this transport opens a connection in clear text
// (spi.OpeningRecognizer): a smux frame header of version 1 or 2 opening
// a stream (cmd SYN, no body) with a client's stream id (odd), followed,
// when first holds 16 bytes, by another frame header of the same version
// and a known command. A provider serving tcp reads these bytes from a
// consumer whose URL key transport is smux (the default: airnode health's
// first try) and reports a transport mismatch at Info, not a bad magic.
func (Builder) RecognizesOpening(first []byte) bool {
	const header = 8 // version, cmd, length (uint16), stream id (uint32); little-endian
	if len(first) < header {
		return false
	}
	ver := first[0]
	if ver != 1 && ver != smuxVersion || first[1] != cmdSYN || binary.LittleEndian.Uint16(first[2:4]) != 0 {
		return false
	}
	if sid := binary.LittleEndian.Uint32(first[4:8]); sid%2 == 0 {
		return false
	}
	if len(first) >= 2*header && (first[header] != ver || first[header+1] > cmdUPD) {
		return false
	}
	return true
}

var _ spi.OpeningRecognizer = Builder{}

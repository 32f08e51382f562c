package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/airnode/airnode/spi"
)

// Frame layout constants.
const (
	// HeaderLen is the length of a frame header in bytes.
	HeaderLen = 16
	// MagicHigh and MagicLow are the first two bytes of every frame.
	MagicHigh byte = 0xA1
	MagicLow  byte = 0x7E

	// FlagRequest marks a request (unset: a response).
	FlagRequest uint8 = 0x80
	// FlagTwoWay marks a request that expects a response.
	FlagTwoWay uint8 = 0x40
	// FlagEvent marks an event (codec id 0): a heartbeat (two-way request
	// or its answer), or a one-way read-only, go-away or cancel event
	// (see the package doc).
	FlagEvent uint8 = 0x20
	// CodecMask selects the codec id, 1-31 (0: no body, events only).
	CodecMask uint8 = 0x1F

	// DefaultPayload is the default maximum body length: 8 MiB (the URL
	// key "payload", as in Dubbo).
	DefaultPayload int64 = 8 << 20
	// MaxPayload is the largest payload limit the 4-byte length can carry.
	MaxPayload int64 = 1<<32 - 1
)

// Sentinel errors of DecodeHeader and DecodeFrame; the returned errors wrap
// them with the offending values.
var (
	ErrBadMagic  = errors.New("bad magic")
	ErrTooLarge  = errors.New("frame too large")
	ErrTruncated = errors.New("truncated frame")
)

// Header is a decoded frame header. The zero value is a one-way response
// with codec 0 and status 0; build headers with the fields below.
type Header struct {
	Flags  uint8      // FlagRequest | FlagTwoWay | FlagEvent | codec id
	Status spi.Status // responses only; 0 in requests
	ID     uint64     // request id, echoed by the response
	Length uint32     // body length in bytes
}

// IsRequest reports whether the frame is a request.
func (h Header) IsRequest() bool { return h.Flags&FlagRequest != 0 }

// TwoWay reports whether the request expects a response.
func (h Header) TwoWay() bool { return h.Flags&FlagTwoWay != 0 }

// IsEvent reports whether the frame is a heartbeat event.
func (h Header) IsEvent() bool { return h.Flags&FlagEvent != 0 }

// CodecID returns the codec id in the low 5 bits of the flags.
func (h Header) CodecID() uint8 { return h.Flags & CodecMask }

// Put writes h into b[:HeaderLen]; b must be at least HeaderLen long.
func (h Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	b[0], b[1] = MagicHigh, MagicLow
	b[2] = h.Flags
	b[3] = byte(h.Status)
	binary.BigEndian.PutUint64(b[4:12], h.ID)
	binary.BigEndian.PutUint32(b[12:16], h.Length)
}

// Append appends the encoded header to dst.
func (h Header) Append(dst []byte) []byte {
	var b [HeaderLen]byte
	h.Put(b[:])
	return append(dst, b[:]...)
}

// DecodeHeader decodes the header at the start of b. payload is the largest
// body length accepted (≤ 0 means DefaultPayload). Errors: ErrTruncated when
// b is shorter than HeaderLen, ErrBadMagic, ErrTooLarge (returned with the
// decoded header, so that a reader can skip the body and answer it).
func DecodeHeader(b []byte, payload int64) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("protocol: %w: header needs %d bytes, got %d", ErrTruncated, HeaderLen, len(b))
	}
	if b[0] != MagicHigh || b[1] != MagicLow {
		return Header{}, fmt.Errorf("protocol: %w 0x%02x%02x (want 0xa17e)", ErrBadMagic, b[0], b[1])
	}
	h := Header{
		Flags:  b[2],
		Status: spi.Status(b[3]),
		ID:     binary.BigEndian.Uint64(b[4:12]),
		Length: binary.BigEndian.Uint32(b[12:16]),
	}
	if payload <= 0 {
		payload = DefaultPayload
	}
	if int64(h.Length) > payload {
		// h with the error: a reader may skip the body and answer
		return h, fmt.Errorf("protocol: %w: body %d bytes exceeds payload limit %s", ErrTooLarge, h.Length, FormatSize(payload))
	}
	return h, nil
}

// DecodeFrame decodes one whole frame at the start of b: its header and its
// body (a sub-slice of b, not a copy), and the number of bytes consumed.
// Errors are DecodeHeader's, and ErrTruncated when the body is incomplete.
func DecodeFrame(b []byte, payload int64) (h Header, body []byte, n int, err error) {
	h, err = DecodeHeader(b, payload)
	if err != nil {
		return Header{}, nil, 0, err
	}
	end := HeaderLen + int(h.Length)
	if len(b) < end {
		return Header{}, nil, 0, fmt.Errorf("protocol: %w: body needs %d bytes, got %d", ErrTruncated, h.Length, len(b)-HeaderLen)
	}
	return h, b[HeaderLen:end], end, nil
}

// ReadHeader reads and decodes one header from r into buf. A clean end of
// stream before the first byte is io.EOF; a partial header is ErrTruncated
// wrapping io.ErrUnexpectedEOF.
func ReadHeader(r io.Reader, buf *[HeaderLen]byte, payload int64) (Header, error) {
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return Header{}, fmt.Errorf("protocol: %w: %w", ErrTruncated, err)
		}
		return Header{}, err
	}
	return DecodeHeader(buf[:], payload)
}

// FormatSize renders a byte count for messages: "8 MiB", "64 KiB", or
// "1000 bytes" when it is not a whole number of KiB.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

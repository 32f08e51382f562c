package msgpack

import (
	"fmt"
	"io"
)

// bodyReader is what bytes.Reader and strings.Reader offer: the decoder can
// look at the rest of the body in place (WriteTo hands it over without a
// copy) and come back.
type bodyReader interface {
	io.ReadSeeker
	io.ByteReader
	io.WriterTo
	Len() int
}

// lengthCheck walks a body handed over by a bodyReader's WriteTo. It lives in
// the pooled Decoder, so passing it as an io.Writer allocates nothing.
type lengthCheck struct {
	err   error
	start int64 // the body's offset in its reader when checked; -1: not seekable
}

// Write walks p (see checkLengths) and records the verdict. It takes all of
// p and retains none of it.
func (c *lengthCheck) Write(p []byte) (int, error) {
	c.err = walkLengths(p)
	return len(p), nil
}

// WriteString is Write for strings.Reader, which hands over its string.
func (c *lengthCheck) WriteString(s string) (int, error) {
	c.err = walkLengths(s)
	return len(s), nil
}

// checkLengths reports, for the MessagePack tokens left in r, a declared
// string, binary, extension or container length larger than the bytes left —
// msgpack allocates a []byte target of the declared length before reading
// it, so six hostile bytes could cost 4 GiB — or containers nested deeper
// than MaxDepth, which msgpack decodes recursively into any-typed fields (a
// stack overflow is fatal, not a panic). It leaves r where it found it, and
// records where that is in c.start (-1 when r cannot tell).
//
// The walk reads the body in place through r.WriteTo, not byte by byte
// through r: on a 130-byte request body that is the difference between
// ~90 ns and ~48 ns per decoder (BenchmarkCheckLengths, alternated). Short
// bodies are walked too: a declared length is bounded by its header, not by
// the body (six bytes declare 4 GiB of binary, which msgpack v5.4 allocates
// at once), so no body size makes the walk unnecessary.
func checkLengths(r bodyReader, c *lengthCheck) error {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		c.start = -1
		return nil // cannot come back: leave the checks to the decoder
	}
	c.err, c.start = nil, start
	if _, err := r.WriteTo(c); err != nil {
		c.err = nil // a reader that would not hand its bytes over: no verdict
	}
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("rewind after the length check: %w", err)
	}
	err, c.err = c.err, nil
	return err
}

// walkLengths is checkLengths on the bytes themselves. The walk is
// iterative: O(tokens), no allocation below 16 levels of nesting. A byte
// that is no MessagePack code or a truncated header ends the walk without a
// verdict: the decoder reports them where they are.
func walkLengths[B []byte | string](b B) error {
	i := 0
	// word reads a big-endian unsigned integer of size bytes at i.
	word := func(size int) (int64, bool) {
		if len(b)-i < size {
			return 0, false
		}
		var n int64
		for k := range size {
			n = n<<8 | int64(b[i+k])
		}
		i += size
		return n, true
	}
	var open [16]int64
	nest := open[:0] // items left in each open container, innermost last
	for i < len(b) {
		c := b[i]
		i++
		var (
			skip  int64 // bytes that follow the header
			items int64 // container entries that follow (each at least a byte)
			ok    = true
		)
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			items = 2 * int64(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			items = int64(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = int64(c & 0x1f)
		case c == 0xc4 || c == 0xd9: // bin8, str8
			skip, ok = word(1)
		case c == 0xc5 || c == 0xda: // bin16, str16
			skip, ok = word(2)
		case c == 0xc6 || c == 0xdb: // bin32, str32
			skip, ok = word(4)
		case c >= 0xc7 && c <= 0xc9: // ext8, ext16, ext32: length, type, data
			skip, ok = word(1 << (c - 0xc7))
			skip++
		case c == 0xca:
			skip = 4
		case c == 0xcb:
			skip = 8
		case c >= 0xcc && c <= 0xcf: // uint8..uint64
			skip = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3: // int8..int64
			skip = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8: // fixext1..fixext16: type, data
			skip = 1 + 1<<(c-0xd4)
		case c == 0xdc:
			items, ok = word(2)
		case c == 0xdd:
			items, ok = word(4)
		case c == 0xde:
			items, ok = word(2)
			items *= 2
		case c == 0xdf:
			items, ok = word(4)
			items *= 2
		default: // 0xc1: never used; the decoder reports it, the walk goes on
		}
		if !ok {
			return nil // truncated header: the decoder reports it
		}
		left := int64(len(b) - i)
		if skip > left || items > left {
			return fmt.Errorf("declared length %d at code 0x%02x exceeds the %d bytes left", max(skip, items), c, left)
		}
		if len(nest) > 0 {
			nest[len(nest)-1]-- // this token is an item of the innermost container
		}
		if items > 0 {
			if len(nest) == MaxDepth {
				return errTooDeep
			}
			nest = append(nest, items)
		}
		for len(nest) > 0 && nest[len(nest)-1] == 0 {
			nest = nest[:len(nest)-1]
		}
		i += int(skip)
	}
	return nil
}

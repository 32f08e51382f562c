package msgpack

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"
)

// checkLengthsByByte is the walk as it was before it read the body in place
// (commit 1417ed6): byte by byte through the reader's methods. It is kept
// as the oracle the in-place walk must agree with (FuzzCheckLengths) and as
// the "before" of BenchmarkCheckLengths.
func checkLengthsByByte(r bodyReader) error {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	defer r.Seek(start, io.SeekStart)
	word := func(size int) (int64, bool) {
		var n int64
		for range size {
			c, err := r.ReadByte()
			if err != nil {
				return 0, false
			}
			n = n<<8 | int64(c)
		}
		return n, true
	}
	var open [16]int64
	nest := open[:0]
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil
		}
		var (
			skip, items int64
			ok          = true
		)
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			items = 2 * int64(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			items = int64(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = int64(c & 0x1f)
		case c == 0xc4 || c == 0xd9:
			skip, ok = word(1)
		case c == 0xc5 || c == 0xda:
			skip, ok = word(2)
		case c == 0xc6 || c == 0xdb:
			skip, ok = word(4)
		case c >= 0xc7 && c <= 0xc9:
			skip, ok = word(1 << (c - 0xc7))
			skip++
		case c == 0xca:
			skip = 4
		case c == 0xcb:
			skip = 8
		case c >= 0xcc && c <= 0xcf:
			skip = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3:
			skip = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8:
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
		}
		left := int64(r.Len())
		if !ok {
			return nil
		}
		if skip > left || items > left {
			return fmt.Errorf("declared length %d at code 0x%02x exceeds the %d bytes left", max(skip, items), c, left)
		}
		if len(nest) > 0 {
			nest[len(nest)-1]--
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
		if skip > 0 {
			if _, err := r.Seek(skip, io.SeekCurrent); err != nil {
				return nil
			}
		}
	}
}

// requestBody is a typical request: service, method, attachments, the
// argument count and a 100-byte string.
func requestBody(tb testing.TB) []byte {
	var buf bytes.Buffer
	enc := vm.NewEncoder(&buf)
	for _, v := range []any{"demo.Echo", "Echo", map[string]string{"timeout": "1000"}, 1, strings.Repeat("a", 100)} {
		if err := enc.Encode(v); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// FuzzCheckLengths: the in-place walk gives the byte-by-byte walk's verdict
// on any body, from any start offset, over a bytes.Reader and a
// strings.Reader, and leaves the reader where it was.
//
//	go test -fuzz=FuzzCheckLengths -fuzztime=60s ./extensions/codec/msgpack
func FuzzCheckLengths(f *testing.F) {
	f.Add(requestBody(f), uint8(0))
	f.Add([]byte{0xa1, 'x', 0xc9, 0xff, 0xff, 0xff, 0xff}, uint8(2))
	f.Add(bytes.Repeat([]byte{0x91}, 20), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, at uint8) {
		off := int64(min(int(at), len(in)))
		var c lengthCheck
		for _, mk := range []func() bodyReader{
			func() bodyReader { return bytes.NewReader(in) },
			func() bodyReader { return strings.NewReader(string(in)) },
		} {
			r, ref := mk(), mk()
			r.Seek(off, io.SeekStart)
			ref.Seek(off, io.SeekStart)
			got, want := checkLengths(r, &c), checkLengthsByByte(ref)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("% x from %d (%T): %v, byte by byte %v", in, off, r, got, want)
			}
			if pos, _ := r.Seek(0, io.SeekCurrent); pos != off {
				t.Fatalf("% x from %d: reader left at %d", in, off, pos)
			}
		}
	})
}

// BenchmarkCheckLengths prices the hostile-length pre-walk of every
// NewDecoder over a body in memory, on a typical request body: the walk over
// the bytes in place against the byte-by-byte walk it replaced.
//
//	go test -run '^$' -bench CheckLengths -benchmem -count 6 ./extensions/codec/msgpack
func BenchmarkCheckLengths(b *testing.B) {
	body := requestBody(b)
	var r bytes.Reader
	b.Run("byte-by-byte", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(body)
			if err := checkLengthsByByte(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-place", func(b *testing.B) {
		b.ReportAllocs()
		var c lengthCheck
		for b.Loop() {
			r.Reset(body)
			if err := checkLengths(&r, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A decoder over a body larger than maxPooledBody is not pooled on Release:
// its scratch buffer may have grown to the body's longest string.
func TestLargeBodyDecoderIsNotPooled(t *testing.T) {
	for _, tc := range []struct {
		size int
		pool bool
	}{{100, true}, {maxPooledBody, true}, {maxPooledBody + 1, false}} {
		body := bytes.Repeat([]byte{0xc0}, tc.size) // nils
		d := Codec{}.NewDecoder(bytes.NewReader(body)).(*Decoder)
		if d.reuse != tc.pool {
			t.Errorf("%d-byte body: pooled on Release %v, want %v", tc.size, d.reuse, tc.pool)
		}
		d.Release()
	}
	// A stream's size is unknown: not pooled either.
	d := Codec{}.NewDecoder(struct{ io.Reader }{bytes.NewReader([]byte{0xc0})}).(*Decoder)
	if d.reuse {
		t.Error("decoder over a plain io.Reader: pooled on Release")
	}
	d.Release()
}

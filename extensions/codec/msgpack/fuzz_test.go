package msgpack_test

import (
	"bytes"
	"testing"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// FuzzDecode: any body decodes into the exchange's targets (and a reused
// one whose interfaces hold values) with an error or
// a value, never a panic, a hang or a huge allocation; the released decoder
// then comes back from the pool reading a valid body right.
//
//	go test -fuzz=FuzzDecode -fuzztime=60s ./extensions/codec/msgpack
func FuzzDecode(f *testing.F) {
	var body bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&body)
	for _, v := range []any{"demo.Echo", "Echo", map[string]string{"timeout": "1000"}, 1, map[string]any{"a": []any{1, "b"}}} {
		if err := enc.Encode(v); err != nil {
			f.Fatal(err)
		}
	}
	valid := body.Bytes()
	f.Add(valid)
	f.Add([]byte{0xc6, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x91, 0x91, 0x91, 0xc0})
	f.Add([]byte{0xcd, 0x01, 0x2c, 0xff, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // 300, -1, 2^64-1
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(in))
		var (
			s   string
			m   map[string]string
			n   int
			v   any
			b   []byte
			per spitest.CodecPerson
			i8  int8
			u16 uint16
			ns  struct { // integers checked against their range (ints.go)
				A int8
				B uint64
				C []int16
				D *uint32
			}
		)
		// a reply target reused: its interfaces hold values (reuse.go)
		reused := struct {
			V, P any
			L    []any
		}{V: map[string]any{"k": 1}, P: &spitest.CodecPerson{Name: "x"}, L: make([]any, 1, 3)}
		reused.L[0] = "old"
		for _, p := range []any{&s, &m, &n, &v, &b, &per, &reused, &i8, &u16, &ns} {
			_ = dec.Decode(p)
		}
		spi.Release(dec)
		dec = msgpack.Codec{}.NewDecoder(bytes.NewReader(valid))
		if err := dec.Decode(&s); err != nil || s != "demo.Echo" {
			t.Fatalf("after a released decoder read % x: %q, %v", in, s, err)
		}
		spi.Release(dec)
	})
}

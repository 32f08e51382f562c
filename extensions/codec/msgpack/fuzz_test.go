package msgpack_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

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
	for _, v := range []any{"demo.Echo", "Echo", map[string]string{"timeout": "1000"}, 1, map[string]any{"a": []any{1, "b"}},
		map[string]any{"B": "aGk=", "T": "2026-11-30T07:00:00Z", "MI": map[string]any{"1": "a"}, "S": nil}} {
		if err := enc.Encode(v); err != nil {
			f.Fatal(err)
		}
	}
	valid := body.Bytes()
	f.Add(valid)
	var generic bytes.Buffer
	bad := map[string]any{"B": "aGk", "T": "noon", "TP": nil, "MI": map[string]any{"x": "a"}, "A": []any{"a", "b", "c"},
		"S": "s", "N": []any{map[string]any{"Q": "3"}}}
	if err := (msgpack.Codec{}).NewEncoder(&generic).Encode(bad); err != nil {
		f.Fatal(err)
	}
	f.Add(generic.Bytes())
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
		// what a generic caller's strings are read into (jsonforms.go), and
		// targets found by explain (a path, an interface with methods)
		var jf struct {
			B  []byte
			T  time.Time
			TP *time.Time
			MI map[int]string
			MU map[uint8][]byte
			A  [2]string
			S  fmt.Stringer
			N  []struct{ Q int64 }
		}
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
		dec = msgpack.Codec{}.NewDecoder(bytes.NewReader(in)) // its first value, strictly as an argument
		dec.(*msgpack.Decoder).DisallowUnknownFields()
		_ = dec.Decode(&jf)
		spi.Release(dec)
		dec = msgpack.Codec{}.NewDecoder(bytes.NewReader(valid))
		if err := dec.Decode(&s); err != nil || s != "demo.Echo" {
			t.Fatalf("after a released decoder read % x: %q, %v", in, s, err)
		}
		spi.Release(dec)
	})
}

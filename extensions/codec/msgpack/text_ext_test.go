package msgpack_test

import (
	"bytes"
	"fmt"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// price encodes itself as text.
type price struct{ Cents int64 }

func (p price) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%d cents", p.Cents), nil }

func (p *price) UnmarshalText(b []byte) error {
	_, err := fmt.Sscanf(string(b), "%d cents", &p.Cents)
	return err
}

// A TextMarshaler is written as a msgpack str (its text), at the top and in
// a struct field, and read back from a str or from the bin an older build
// wrote.
func TestTextMarshalerIsStr(t *testing.T) {
	type order struct {
		Price *price `json:"price"`
		Other price  `json:"other"`
	}
	for _, c := range []struct {
		v    any
		want string // the untyped value read back, as fmt prints it
	}{
		{price{1234}, "1234 cents"},
		{order{Price: &price{1}, Other: price{2}}, "map[other:2 cents price:1 cents]"},
	} {
		v := c.v
		var buf bytes.Buffer
		enc := msgpack.Codec{}.NewEncoder(&buf)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		spi.Release(enc)
		var x any
		dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(buf.Bytes()))
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		spi.Release(dec)
		if fmt.Sprint(x) != c.want {
			t.Errorf("%#v read untyped = %#v, want %s", v, x, c.want)
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"str", mustMarshal(t, "42 cents")},
		{"bin (older builds)", mustMarshal(t, []byte("42 cents"))},
	} {
		if !msgpcode.IsString(c.b[0]) && !msgpcode.IsBin(c.b[0]) {
			t.Fatalf("%s: code %x", c.name, c.b[0])
		}
		var p price
		dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(c.b))
		if err := dec.Decode(&p); err != nil || p.Cents != 42 {
			t.Errorf("%s into a TextUnmarshaler = %+v, %v", c.name, p, err)
		}
		spi.Release(dec)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := vm.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

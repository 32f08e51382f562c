package spi_test

import (
	"bytes"
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// The bundled json and msgpack decoders are spi.StrictDecoders, and one
// refuses a key naming no struct field in the form spi.UnknownField reads
// (what the provider's kernel relies on).
func TestT20_8_BundledDecodersAreStrict(t *testing.T) {
	type point struct{ X, Y int }
	for _, c := range []spi.Codec{json.Codec{}, msgpack.Codec{}} {
		var buf bytes.Buffer
		enc := c.NewEncoder(&buf)
		if err := enc.Encode(map[string]any{"X": 1, "Z": 2}); err != nil {
			t.Fatalf("%s: encode: %v", c.Name(), err)
		}
		spi.Release(enc)
		dec := c.NewDecoder(bytes.NewReader(buf.Bytes()))
		sd, ok := dec.(spi.StrictDecoder)
		if !ok {
			t.Fatalf("%s: decoder %T is not an spi.StrictDecoder", c.Name(), dec)
		}
		sd.DisallowUnknownFields()
		var p point
		err := sd.Decode(&p)
		if f := spi.UnknownField(err); f == "" {
			t.Errorf("%s: strict Decode of {X, Z} into point: err %v, want one spi.UnknownField names", c.Name(), err)
		}
		spi.Release(dec)
	}
}

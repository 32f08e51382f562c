package msgpack

import (
	"encoding"
	"reflect"
	"sync"

	vm "github.com/vmihailenco/msgpack/v5"
)

// msgpack encodes a type implementing encoding.TextMarshaler (a decimal,
// an ID, an enum: "12.34 EUR") as binary, so `airnode call` printed it as
// base64 ("MTIuMzQgRVVS"), which the same type read back as text refused,
// and a generic reader (Invoke, an any parameter) got []byte where json
// gives the text. Its text is a string, as encoding/json writes it: the
// types registerTypes meets (a value's type and what it holds, as for the
// integer decoders) are encoded as msgpack str. Decoding is msgpack's
// own, UnmarshalText of either str or bin, so a peer of an older build,
// which sends bin, is still read.

var (
	typeOfTextMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	typeOfBinaryMarshaler = reflect.TypeFor[encoding.BinaryMarshaler]()
	typeOfCustomEncoder   = reflect.TypeFor[vm.CustomEncoder]()
	typeOfMarshaler       = reflect.TypeFor[vm.Marshaler]()
)

// textMarshaled reports whether msgpack would encode a t through its
// MarshalText (t or *t implements encoding.TextMarshaler, and neither has
// a msgpack or binary marshaler, which msgpack prefers). time.Time is
// msgpack's timestamp extension, not text.
func textMarshaled(t reflect.Type) bool {
	if r, ok := textTypes.Load(t); ok {
		return r.(bool)
	}
	r := isTextMarshaled(t)
	textTypes.Store(t, r)
	return r
}

// textTypes caches textMarshaled by type (reflect.Type → bool).
var textTypes sync.Map

func isTextMarshaled(t reflect.Type) bool {
	if t == typeOfTime || t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return false
	}
	pt := reflect.PointerTo(t)
	for _, tt := range []reflect.Type{t, pt} {
		if tt.Implements(typeOfCustomEncoder) || tt.Implements(typeOfMarshaler) || tt.Implements(typeOfBinaryMarshaler) {
			return false
		}
	}
	return t.Implements(typeOfTextMarshaler) || pt.Implements(typeOfTextMarshaler)
}

// registerText registers encodeText as msgpack's encoder of t (a
// pointer to t then goes through it too: msgpack checks a pointer's
// element type first).
func registerText(t reflect.Type) {
	vm.Register(reflect.Zero(t).Interface(), encodeText, nil)
}

// encodeText writes v's MarshalText as a msgpack str. A pointer-receiver
// MarshalText is called on v's address, or on a copy when v has none.
func encodeText(e *vm.Encoder, v reflect.Value) error {
	m, ok := v.Interface().(encoding.TextMarshaler)
	if !ok {
		p := v
		if !v.CanAddr() {
			p = reflect.New(v.Type()).Elem()
			p.Set(v)
		}
		m = p.Addr().Interface().(encoding.TextMarshaler)
	}
	b, err := m.MarshalText()
	if err != nil {
		return err
	}
	return e.EncodeString(string(b))
}

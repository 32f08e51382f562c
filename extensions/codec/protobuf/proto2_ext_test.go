package protobuf_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/spi"
)

// kindJSON is v's KindJSON form, which a provider reads.
func kindJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := protobuf.AppendJSON(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Encoder does not send a generic map or array (KindJSON): a provider
// of an earlier build cannot read it. It says what to use instead.
func TestProto2_GenericValueNotSentYet(t *testing.T) {
	for _, v := range []any{map[string]any{"value": "bob"}, []any{1}} {
		_, err := encodeOne(v)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusSerializationError || !strings.Contains(err.Error(), "-p codec=json") {
			t.Fatalf("Encode(%#v): %v, want SERIALIZATION_ERROR pointing to -p codec=json", v, err)
		}
	}
}

// A generic map or array read from its KindJSON form comes back with exact
// numbers (int64 beyond 2^53, uint64 above MaxInt64), as codec=json gives.
func TestProto2_GenericValueIntoAny(t *testing.T) {
	in := map[string]any{"n": int64(9007199254740993), "u": uint64(1 << 63), "l": []any{"x", 0.5, nil}}
	var g any
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(kindJSON(t, in))).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, in) {
		t.Fatalf("read back as %#v, want %#v", g, in)
	}
}

// A map holding itself is refused before anything is written, as msgpack
// refuses it.
func TestProto2_GenericCycleRefused(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	_, err := protobuf.AppendJSON(nil, m)
	var e *spi.Error
	if !errors.As(err, &e) || e.Status != spi.StatusSerializationError || !strings.Contains(err.Error(), "encountered a cycle") {
		t.Fatalf("Encode(cyclic map): %v, want SERIALIZATION_ERROR naming the cycle", err)
	}
}

// Unknown keys of a JSON object for a message are dropped unless the
// decoder is strict (the provider's DisallowUnknownFields, kept for
// generic calls), where they are a TypeMismatch listing the fields.
func TestProto2_UnknownKeyStrictAndLenient(t *testing.T) {
	data := kindJSON(t, map[string]any{"value": "v", "extra": 1})
	var s wrapperspb.StringValue
	if err := (protobuf.Codec{}).NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil || s.GetValue() != "v" {
		t.Fatalf("lenient: %q, %v", s.GetValue(), err)
	}
	dec := protobuf.Codec{}.NewDecoder(bytes.NewReader(data))
	dec.(spi.StrictDecoder).DisallowUnknownFields()
	var p *wrapperspb.StringValue
	err := dec.Decode(&p)
	if f := spi.UnknownField(err); f != `unknown field "extra" in google.protobuf.StringValue (fields: value)` {
		t.Fatalf("strict: %v (field %q)", err, f)
	}
	if strings.Contains(err.Error(), "**") {
		t.Errorf("strict: %q names **wrapperspb.StringValue", err)
	}
}

package msgpack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCodec(t, msgpack.Codec{}) }

func decodeAny(t *testing.T, data []byte) (any, error) {
	t.Helper()
	var v any
	err := msgpack.Codec{}.NewDecoder(bytes.NewReader(data)).Decode(&v)
	return v, err
}

func TestGenericValuesAreJSONPrintable(t *testing.T) {
	data, err := vm.Marshal(map[any]any{1: "one", "n": []any{int8(3), uint64(1 << 63), -2}, true: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeAny(t, data)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("map read into *any as %T, want map[string]any", v)
	}
	n := m["n"].([]any)
	if _, ok := n[0].(int64); !ok {
		t.Errorf("small int read as %T, want int64", n[0])
	}
	if _, ok := n[1].(uint64); !ok {
		t.Errorf("int above MaxInt64 read as %T, want uint64", n[1])
	}
	if _, ok := m["true"].([]byte); !ok {
		t.Errorf("binary read as %T, want []byte", m["true"])
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal of %#v: %v", v, err)
	}
	if want := `{"1":"one","n":[3,9223372036854775808,-2],"true":"Yg=="}`; string(out) != want {
		t.Errorf("printed %s, want %s", out, want)
	}
}

func TestJSONTagsNameFields(t *testing.T) {
	type T struct {
		Service string `json:"service"`
		Plain   int
	}
	var buf bytes.Buffer
	if err := (msgpack.Codec{}).NewEncoder(&buf).Encode(T{"demo.Echo", 3}); err != nil {
		t.Fatal(err)
	}
	v, err := decodeAny(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["service"] != "demo.Echo" || m["Plain"] != int64(3) {
		t.Fatalf("struct read back as %#v, want keys service and Plain", m)
	}
}

func TestDeepNestingIsAnError(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, 1_000_000) // [[[[...]]]]
	_, err := decodeAny(t, append(deep, 0xc0))
	if err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("a million nested arrays: %v, want a nesting error", err)
	}
	deepMaps := bytes.Repeat([]byte{0x81, 0xa1, 'k'}, 100_000)
	if _, err := decodeAny(t, append(deepMaps, 0xc0)); err == nil {
		t.Fatal("100k nested maps: nil error")
	}
	// Into a struct's any field (msgpack's own recursion), bounded too.
	var st struct{ V any }
	body := append([]byte{0x81, 0xa1, 'V'}, append(deep, 0xc0)...)
	if err := (msgpack.Codec{}).NewDecoder(bytes.NewReader(body)).Decode(&st); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("a million nested arrays into a struct field: %v, want a nesting error", err)
	}
	shallow := append(bytes.Repeat([]byte{0x91}, 100), 0x01)
	if _, err := decodeAny(t, shallow); err != nil {
		t.Fatalf("100 nested arrays: %v", err)
	}
}

func TestHostileLengthsFailFast(t *testing.T) {
	for _, in := range [][]byte{
		{0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2},      // bin32 of 4 GiB
		{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'},       // str32 of 2 GiB
		{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01},      // array32 of 4G items
		{0xa1, 'x', 0xc9, 0xff, 0xff, 0xff, 0xff}, // ext32 after a valid value
	} {
		start := time.Now()
		var b []byte
		err := msgpack.Codec{}.NewDecoder(bytes.NewReader(in)).Decode(&b)
		if err == nil || !strings.Contains(err.Error(), "exceeds") {
			t.Errorf("% x into *[]byte: %v, want a length error", in, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("% x: %v to fail", in, d)
		}
	}
}

func TestEncodeErrorIsSerializationError(t *testing.T) {
	err := msgpack.Codec{}.NewEncoder(io.Discard).Encode(make(chan int))
	if !errors.Is(err, spi.ErrSerialization) || !strings.Contains(err.Error(), "chan int") {
		t.Fatalf("Encode(chan int): %v, want SERIALIZATION_ERROR naming chan int", err)
	}
}

func TestEndOfBodyWrapsEOF(t *testing.T) {
	var s string
	err := msgpack.Codec{}.NewDecoder(bytes.NewReader(nil)).Decode(&s)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Decode of an empty body: %v, want io.EOF", err)
	}
}

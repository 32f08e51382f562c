package msgpack_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// decodeOne decodes b, one value, into target.
func decodeOne(b []byte, target any) error {
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(b))
	defer spi.Release(dec)
	return dec.Decode(target)
}

// edge is an integer sent and whether an integer kind holds it.
type edge struct {
	sent any // int64 or uint64, as a consumer's value
	fits bool
}

// edges returns, for an integer type of bits bits, its min, min-1, max and
// max+1 where msgpack can carry them, and 0.
func edges(signed bool, bits int) []edge {
	if signed {
		lo, hi := int64(math.MinInt64>>(64-bits)), int64(math.MaxInt64>>(64-bits))
		es := []edge{{lo, true}, {hi, true}, {int64(0), true}}
		if bits < 64 {
			es = append(es, edge{lo - 1, false}, edge{hi + 1, false})
		} else {
			es = append(es, edge{uint64(math.MaxInt64) + 1, false}, edge{uint64(math.MaxUint64), false})
		}
		return es
	}
	hi := uint64(math.MaxUint64) >> (64 - bits)
	es := []edge{{uint64(0), true}, {hi, true}, {int64(-1), false}, {int64(math.MinInt64), false}}
	if bits < 64 {
		es = append(es, edge{hi + 1, false})
	}
	return es
}

// Tester7 item 1: 300 read into an int8 was 44, -1 into a uint16 65535,
// 18446744073709551615 into an int64 -1, all without an error. Every
// integer kind now takes its min and max and refuses min-1 and max+1 (and
// a negative for an unsigned kind) with a *RangeError, at the top level of
// Decode and as a struct field, whichever way the integer was written
// (compact, as this codec writes, or in a fixed 64-bit form).
func TestIntegersOutOfRangeAreRefused(t *testing.T) {
	kinds := []struct {
		typ    reflect.Type
		signed bool
	}{
		{reflect.TypeFor[int](), true}, {reflect.TypeFor[int8](), true}, {reflect.TypeFor[int16](), true},
		{reflect.TypeFor[int32](), true}, {reflect.TypeFor[int64](), true},
		{reflect.TypeFor[uint](), false}, {reflect.TypeFor[uint8](), false}, {reflect.TypeFor[uint16](), false},
		{reflect.TypeFor[uint32](), false}, {reflect.TypeFor[uint64](), false},
	}
	for _, k := range kinds {
		for _, e := range edges(k.signed, k.typ.Bits()) {
			for _, compact := range []bool{true, false} {
				var b bytes.Buffer
				enc := vm.NewEncoder(&b)
				enc.UseCompactInts(compact)
				if err := enc.Encode(e.sent); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%v into %v (compact %v)", e.sent, k.typ, compact)

				top := reflect.New(k.typ)
				err := decodeOne(b.Bytes(), top.Interface())
				check(t, name, e, err, fmt.Sprint(top.Elem().Interface()))

				// as a struct field, as a Go consumer's reply holds it
				var fb bytes.Buffer
				if err := vm.NewEncoder(&fb).Encode(map[string]any{"V": e.sent}); err != nil {
					t.Fatal(err)
				}
				st := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: k.typ}}))
				err = decodeOne(fb.Bytes(), st.Interface())
				check(t, name+" as a field", e, err, fmt.Sprint(st.Elem().Field(0).Interface()))
			}
		}
	}
}

func check(t *testing.T, name string, e edge, err error, got string) {
	t.Helper()
	if e.fits {
		if err != nil || got != fmt.Sprint(e.sent) {
			t.Errorf("%s: %s, %v; want %v", name, got, err, e.sent)
		}
		return
	}
	var re *msgpack.RangeError
	if !errors.As(err, &re) || re.Value != fmt.Sprint(e.sent) {
		t.Errorf("%s: %s, %v; want a *msgpack.RangeError for %v", name, got, err, e.sent)
	}
}

func TestRangeErrorText(t *testing.T) {
	cases := []struct {
		sent   any
		target any
		err    string
		got    string
	}{
		{300, new(int8), "msgpack: decode into *int8: integer 300 out of range for int8 (-128..127)",
			"an integer (300), out of range -128..127"},
		{-1, new(uint16), "msgpack: decode into *uint16: integer -1 out of range for uint16 (0..65535)",
			"an integer (-1), out of range 0..65535"},
		{int64(1)<<32 + 1, new(int32), "msgpack: decode into *int32: integer 4294967297 out of range for int32 (-2147483648..2147483647)",
			"an integer (4294967297), out of range -2147483648..2147483647"},
		{uint64(math.MaxUint64), new(int64), "msgpack: decode into *int64: integer 18446744073709551615 out of range for int64 (-9223372036854775808..9223372036854775807)",
			"an integer (18446744073709551615), out of range -9223372036854775808..9223372036854775807"},
		{map[string]any{"ID": 1000}, new(struct{ ID int8 }), "msgpack: decode into *struct { ID int8 }: .ID: integer 1000 out of range for int8 (-128..127)",
			"a map with .ID: cannot decode into int8: got an integer (1000), out of range -128..127"},
	}
	for _, c := range cases {
		err := decodeOne(body(t, c.sent), c.target)
		if err == nil || err.Error() != c.err {
			t.Errorf("%v into %T: error %v, want %q", c.sent, c.target, err, c.err)
		}
		var tm spi.TypeMismatch
		if !errors.As(err, &tm) || tm.Got() != c.got {
			t.Errorf("%v into %T: not an spi.TypeMismatch saying %q: %v", c.sent, c.target, c.got, err)
		}
	}
}

// Level is a named integer type, as an enum in a user's struct.
type Level int8

// Account holds integers at every depth msgpack decodes them.
type Account struct {
	ID     uint32
	Level  Level
	Limits map[string]int16
	Flags  []uint16
	Owner  *int8
	Pairs  map[int8]bool
	Nested struct{ N uint16 }
}

// An integer inside a typed target is checked wherever it is: a named
// type, a map value and key, a slice element, behind a pointer, in a nested
// struct. Account is encoded first, as a consumer sends the struct it later
// reads back: msgpack fixes a struct's field decoders when it first meets
// it, encoding too.
func TestIntegersOutOfRangeAreRefusedAtAnyDepth(t *testing.T) {
	ok := body(t, Account{ID: 7, Level: -3, Limits: map[string]int16{"a": 1}, Flags: []uint16{65535}, Pairs: map[int8]bool{-1: true}})
	var acc Account
	if err := decodeOne(ok, &acc); err != nil || acc.ID != 7 || acc.Level != -3 || acc.Flags[0] != 65535 || !acc.Pairs[-1] {
		t.Fatalf("a good account: %+v, %v", acc, err)
	}
	cases := []struct {
		sent map[string]any
		want string // the RangeError's Target and Value
	}{
		{map[string]any{"ID": -1}, "uint32 -1"},
		{map[string]any{"ID": int64(1) << 32}, "uint32 4294967296"},
		{map[string]any{"Level": 128}, "msgpack_test.Level 128"},
		{map[string]any{"Limits": map[string]any{"a": 40000}}, "int16 40000"},
		{map[string]any{"Flags": []any{1, 65536}}, "uint16 65536"},
		{map[string]any{"Owner": -129}, "int8 -129"},
		{map[string]any{"Pairs": map[int64]bool{200: true}}, "int8 200"},
		{map[string]any{"Nested": map[string]any{"N": 65536}}, "uint16 65536"},
	}
	for _, c := range cases {
		var acc Account
		err := decodeOne(body(t, c.sent), &acc)
		var re *msgpack.RangeError
		if !errors.As(err, &re) || re.Target+" "+re.Value != c.want {
			t.Errorf("%v: %v, want a *msgpack.RangeError for %s", c.sent, err, c.want)
		}
	}
	var l Level
	if err := decodeOne(body(t, -200), &l); err == nil {
		t.Errorf("-200 into a *Level: %d, no error", l)
	}
}

// A float is no integer, with or without a fraction (msgpack's rule, kept):
// the error says what was sent.
func TestFloatIntoAnIntegerIsATypeError(t *testing.T) {
	for _, target := range []any{new(int8), new(uint64), new(int), new(Level)} {
		err := decodeOne(body(t, 1.5), target)
		var te *msgpack.TypeError
		if !errors.As(err, &te) || te.Got() != "a float (1.5)" {
			t.Errorf("1.5 into %T: %v, want got a float (1.5)", target, err)
		}
	}
	var s struct{ N int8 }
	if err := decodeOne(body(t, map[string]any{"N": 2.5}), &s); err == nil {
		t.Errorf("2.5 into an int8 field: %d, no error", s.N)
	}
}

// A refused integer fails the decoder for good, as any failed Decode: the
// values after it are out of step.
func TestRangeErrorIsSticky(t *testing.T) {
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, 300, 1)))
	defer spi.Release(dec)
	var a, b int8
	if err := dec.Decode(&a); err == nil {
		t.Fatalf("300 into an int8: %d, no error", a)
	}
	if err := dec.Decode(&b); err == nil {
		t.Errorf("after a refused integer: %d, no error", b)
	}
}

// nil still reads as 0 into an integer, at the top and in a field.
func TestNilIntoAnInteger(t *testing.T) {
	n := int8(5)
	if err := decodeOne(body(t, nil), &n); err != nil || n != 0 {
		t.Errorf("nil into *int8 holding 5: %d, %v", n, err)
	}
	s := struct{ N uint16 }{N: 5}
	if err := decodeOne(body(t, map[string]any{"N": nil}), &s); err != nil || s.N != 0 {
		t.Errorf("nil into a uint16 field holding 5: %d, %v", s.N, err)
	}
}

// Tier is a named integer type first met by msgpack directly.
type Tier uint8

// msgpack fixes the decoder of a pointer type when it first meets it, with
// its element's decoder as it was then: a *Tier met by msgpack directly
// (here encoding, as a plugin's result is encoded) before this codec knew
// Tier kept truncating. The codec registers the pointer type too.
func TestNamedIntegerBehindAPointerMetBeforeIsChecked(t *testing.T) {
	first := Tier(3)
	if _, err := vm.Marshal(struct{ P *Tier }{&first}); err != nil {
		t.Fatal(err)
	}
	var s struct{ Q []*Tier }
	if err := decodeOne(body(t, map[string]any{"Q": []any{1, 256}}), &s); err == nil {
		t.Errorf("256 into a *Tier element: %d, no error", *s.Q[1])
	}
	var p *Tier
	if err := decodeOne(body(t, 300), &p); err == nil {
		t.Errorf("300 into a **Tier: %d, no error", *p)
	}
	if err := decodeOne(body(t, 255), &p); err != nil || *p != 255 {
		t.Errorf("255 into a **Tier: %v", err)
	}
	if err := decodeOne(body(t, map[string]any{"Q": []any{nil, 2}}), &s); err != nil || s.Q[0] != nil || *s.Q[1] != 2 {
		t.Errorf("[nil, 2] into []*Tier: %v, %v", s.Q, err)
	}
}

// A float64 on the wire (what `airnode call` and generic callers send)
// reads into a float32, rounded as encoding/json does, at the top level,
// in a field and behind a pointer; one beyond float32's range is refused
// (msgpack itself failed every float64 into a float32: "invalid code=cb").
func TestFloat64IntoFloat32(t *testing.T) {
	enc := func(v any) []byte {
		b, err := vm.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var f float32
	if err := decodeOne(enc(1.5), &f); err != nil || f != 1.5 {
		t.Fatalf("1.5 into float32: %v, %v", f, err)
	}
	if err := decodeOne(enc(0.1), &f); err != nil || f != float32(0.1) {
		t.Fatalf("0.1 into float32: %v, %v", f, err)
	}
	if err := decodeOne(enc(int64(3)), &f); err != nil || f != 3 {
		t.Fatalf("3 into float32: %v, %v", f, err)
	}
	var s struct {
		F float32
		P *float32
	}
	if err := decodeOne(enc(map[string]any{"F": 2.25, "P": -4.5}), &s); err != nil || s.F != 2.25 || s.P == nil || *s.P != -4.5 {
		t.Fatalf("fields: %+v, %v", s, err)
	}
	err := decodeOne(enc(1e39), &f)
	var re *msgpack.RangeError
	if !errors.As(err, &re) || re.Target != "float32" {
		t.Fatalf("1e39 into float32: %v; want a *RangeError", err)
	}
}

package msgpack_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// msgpack writes every non-negative integer as unsigned (200 is uint8 on
// the wire), so msgpack's own generic decoding gives uint64 for an int64
// sent; into *any, and into an interface inside a typed target, integers
// read as int64, uint64 only above MaxInt64.
func TestGenericIntegersAreInt64(t *testing.T) {
	in := []any{int64(200), int64(1 << 40), int64(-5), uint64(math.MaxUint64), 1.5,
		map[string]any{"a": []any{int64(300)}}, []any{uint8(7), []any{int64(70000)}}}
	want := []any{int64(200), int64(1 << 40), int64(-5), uint64(math.MaxUint64), 1.5,
		map[string]any{"a": []any{int64(300)}}, []any{int64(7), []any{int64(70000)}}}
	d := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, in...)))
	defer spi.Release(d)
	for i := range in {
		var got any
		if err := d.Decode(&got); err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%#v into *any: %#v (%v), want %#v", in[i], got, err, want[i])
		}
	}
	type rec struct {
		Any any
		L   []any
		M   map[string]any
	}
	d2 := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, rec{Any: int64(200), L: []any{int64(300), []any{int64(400)}}, M: map[string]any{"k": int64(500)}})))
	defer spi.Release(d2)
	var r rec
	if err := d2.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if want := (rec{Any: int64(200), L: []any{int64(300), []any{int64(400)}}, M: map[string]any{"k": int64(500)}}); !reflect.DeepEqual(r, want) {
		t.Fatalf("typed: %#v, want %#v", r, want)
	}
}

type Point struct{ X, Y int }

type Line struct {
	Start Point `json:"start"`
	End   Point
}

// Map keys match struct fields ignoring case, as encoding/json (so a
// CLI user's {"x":3} reaches X); an unknown key is dropped, and the
// values around it are read in step.
func TestKeysMatchFieldsIgnoringCase(t *testing.T) {
	b := body(t, "first", map[string]any{"x": 3, "Y": 4, "z": 9}, map[string]any{"START": map[string]any{"x": 1}, "end": map[string]any{"y": 2}}, "after")
	d := msgpack.Codec{}.NewDecoder(bytes.NewReader(b))
	defer spi.Release(d)
	var s string
	p := Point{X: 100, Y: 100}
	var l Line
	if err := d.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(&p); err != nil || p != (Point{3, 4}) {
		t.Fatalf("Point: %+v, %v", p, err)
	}
	if err := d.Decode(&l); err != nil || l != (Line{Point{1, 0}, Point{0, 2}}) {
		t.Fatalf("Line: %+v, %v", l, err)
	}
	if err := d.Decode(&s); err != nil || s != "after" {
		t.Fatalf("after: %q, %v", s, err)
	}
}

// After DisallowUnknownFields (what the provider does for arguments) an
// unknown key is an error naming it, the struct, its fields and the
// nearest one; keys differing in case still match.
func TestDisallowUnknownFields(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{map[string]any{"x": 3, "y": 4}, ""},
		{map[string]any{"X": 3, "Z": 4}, `msgpack: decode into *msgpack_test.Line: unknown fields "X", "Z" in Line (fields: start, End)`},
		{map[string]any{"start": map[string]any{"Xs": 1}}, `msgpack: decode into *msgpack_test.Line: unknown field "Xs" in Point at .start (fields: X, Y); did you mean "X"?`},
	}
	for i, c := range cases {
		d := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, c.v)))
		d.(interface{ DisallowUnknownFields() }).DisallowUnknownFields()
		var err error
		if i == 0 {
			var p Point
			if err = d.Decode(&p); err != nil || p != (Point{3, 4}) {
				t.Errorf("%v: %+v, %v", c.v, p, err)
			}
		} else {
			var tm spi.TypeMismatch
			if err = d.Decode(new(Line)); err == nil || err.Error() != c.want || !errors.As(err, &tm) {
				t.Errorf("%v: %v, want %q (a spi.TypeMismatch)", c.v, err, c.want)
			}
		}
		spi.Release(d)
	}
}

// A stream (not a body in memory) cannot be read again: its keys match as
// written and an unknown one is skipped, as msgpack does, and the values
// after it stay in step.
func TestStreamSkipsUnknownKeys(t *testing.T) {
	d := msgpack.Codec{}.NewDecoder(struct{ io.Reader }{bytes.NewReader(body(t, map[string]any{"X": 3, "z": 9}, "after"))})
	defer spi.Release(d)
	var p Point
	var s string
	if err := d.Decode(&p); err != nil || p != (Point{X: 3}) {
		t.Fatalf("Point: %+v, %v", p, err)
	}
	if err := d.Decode(&s); err != nil || s != "after" {
		t.Fatalf("after: %q, %v", s, err)
	}
}

// A value decoded again after its keys were renamed keeps the generic maps
// and integers inside it (they are read from the renamed bytes, not the
// body).
func TestRenamedValueKeepsGenericValuesInside(t *testing.T) {
	type rec struct {
		X    int
		Meta any
		Tags map[string]any
	}
	in := map[string]any{"x": 3, "meta": map[string]any{"a": []any{int64(200), map[string]any{"b": "c"}}}, "TAGS": map[string]any{"k": int64(1)}}
	d := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, "first", in, "after")))
	defer spi.Release(d)
	var s string
	var r rec
	if err := d.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if err := d.Decode(&r); err != nil {
		t.Fatal(err)
	}
	want := rec{X: 3, Meta: map[string]any{"a": []any{int64(200), map[string]any{"b": "c"}}}, Tags: map[string]any{"k": int64(1)}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("decoded %#v, want %#v", r, want)
	}
	if err := d.Decode(&s); err != nil || s != "after" {
		t.Fatalf("after: %q, %v", s, err)
	}
}

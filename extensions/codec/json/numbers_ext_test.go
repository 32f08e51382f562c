package json_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	stdjson "encoding/json"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/spi"
)

func decode(t *testing.T, text string, v any) error {
	t.Helper()
	d := json.Codec{}.NewDecoder(strings.NewReader(text))
	defer spi.Release(d)
	return d.Decode(v)
}

// Numbers read into *any are int64 when they are integers that fit,
// uint64 when they fit there, else float64: 2^53+1 keeps its last digit.
func TestGenericNumbersAreExact(t *testing.T) {
	cases := []struct {
		text string
		want any
	}{
		{"9007199254740993", int64(9007199254740993)},
		{"-9223372036854775808", int64(-9223372036854775808)},
		{"12345678901234567890", uint64(12345678901234567890)},
		{"123456789012345678901234", 1.2345678901234568e+23},
		{"1.5", 1.5},
		{"1e3", 1000.0},
		{"1.0", 1.0},
		{"0", int64(0)},
		{`{"a":[9007199254740993,{"b":2.5}]}`, map[string]any{"a": []any{int64(9007199254740993), map[string]any{"b": 2.5}}}},
	}
	for _, c := range cases {
		var got any
		if err := decode(t, c.text, &got); err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s into *any: %#v (%v), want %#v", c.text, got, err, c.want)
		}
	}
	if err := decode(t, "1e400", new(any)); err == nil || !strings.Contains(err.Error(), "number 1e400 is beyond the range of float64") {
		t.Errorf("1e400 into *any: %v, want an error", err)
	}
}

// Interfaces inside typed targets get the same numbers; typed numbers are
// as encoding/json reads them.
func TestNumbersInsideTypedTargets(t *testing.T) {
	type rec struct {
		N   int64
		F   float64
		Any any
		L   []any
		P   *rec
	}
	var r rec
	if err := decode(t, `{"N":9007199254740993,"F":1,"Any":9007199254740993,"L":[1,"x"],"P":{"Any":2}}`, &r); err != nil {
		t.Fatal(err)
	}
	if r.N != 9007199254740993 || r.F != 1 || r.Any != int64(9007199254740993) || r.L[0] != int64(1) || r.P.Any != int64(2) {
		t.Fatalf("decoded %+v, P %+v", r, *r.P)
	}
	var m map[string]any
	if err := decode(t, `{"k":[1]}`, &m); err != nil || !reflect.DeepEqual(m, map[string]any{"k": []any{int64(1)}}) {
		t.Fatalf("map[string]any: %#v, %v", m, err)
	}
	var n struct{ N stdjson.Number }
	if err := decode(t, `{"N":12}`, &n); err != nil || n.N != "12" {
		t.Fatalf("a json.Number field: %#v, %v", n, err)
	}
}

type Point struct{ X, Y int }

// Keys match fields ignoring case (encoding/json); an unknown key is
// ignored unless DisallowUnknownFields, then an error naming the key, the
// struct and its fields.
func TestUnknownFields(t *testing.T) {
	var p Point
	if err := decode(t, `{"x":3,"y":4,"z":5}`, &p); err != nil || p != (Point{3, 4}) {
		t.Fatalf("lenient: %+v, %v", p, err)
	}
	for _, c := range []struct{ text, want string }{
		{`{"x":3,"y":4}`, ""},
		{`{"X":3,"Z":4}`, `json: decode into json_test.Point: unknown field "Z" in Point (fields: X, Y)`},
		{` {"X":3,"Yy":4}`, `json: decode into json_test.Point: unknown field "Yy" in Point (fields: X, Y); did you mean "Y"?`},
	} {
		// the value follows another in the body: the refused one is read again at its offset
		d := json.Codec{}.NewDecoder(bytes.NewReader([]byte(`"first"` + "\n" + c.text + "\n" + `"after"`)))
		d.(interface{ DisallowUnknownFields() }).DisallowUnknownFields()
		var s string
		var p Point
		if err := d.Decode(&s); err != nil {
			t.Fatal(err)
		}
		err := d.Decode(&p)
		if c.want == "" {
			if err != nil || p != (Point{3, 4}) {
				t.Errorf("%s: %+v, %v", c.text, p, err)
			}
			continue
		}
		var tm spi.TypeMismatch
		if err == nil || err.Error() != c.want || !errors.As(err, &tm) {
			t.Errorf("%s: %v, want %q (a spi.TypeMismatch)", c.text, err, c.want)
		}
		if err := d.Decode(&s); err != nil || s != "after" {
			t.Errorf("%s: the value after it: %q, %v", c.text, s, err)
		}
		spi.Release(d)
	}
}

package generic_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/spi"
)

type Point struct{ X, Y int }

type Line struct {
	Start Point `json:"start"`
	End   *Point
	Note  string `json:"-"`
	Meta
}

type Meta struct{ Tags []string }

func never(reflect.Type) bool { return false }

var names = generic.Names{"json"}

func TestCheckFieldsRenamesKeysDifferingInCase(t *testing.T) {
	x := map[string]any{"START": map[string]any{"x": 1, "Y": 2}, "end": map[string]any{"y": 3}, "tags": []any{"a"}}
	changed, err := names.CheckFields(x, reflect.TypeFor[Line](), never, false)
	if err != nil || !changed {
		t.Fatalf("CheckFields: changed %v, %v", changed, err)
	}
	want := map[string]any{"start": map[string]any{"X": 1, "Y": 2}, "End": map[string]any{"Y": 3}, "Tags": []any{"a"}}
	if !reflect.DeepEqual(x, want) {
		t.Fatalf("renamed to %v, want %v", x, want)
	}
	if changed, err := names.CheckFields(want, reflect.TypeFor[Line](), never, false); changed || err != nil {
		t.Fatalf("exact keys: changed %v, %v", changed, err)
	}
}

func TestCheckFieldsUnknownKey(t *testing.T) {
	cases := []struct {
		x    any
		t    reflect.Type
		want string
	}{
		{map[string]any{"X": 1, "Z": 2}, reflect.TypeFor[Point](), `unknown field "Z" in Point (fields: X, Y)`},
		{map[string]any{"Xx": 1}, reflect.TypeFor[*Point](), `unknown field "Xx" in Point (fields: X, Y); did you mean "X"?`},
		{map[string]any{"start": map[string]any{"q": 1}}, reflect.TypeFor[Line](), `unknown field "q" in Point at .start (fields: X, Y)`},
		{[]any{map[string]any{"start": nil}, map[string]any{"Ends": 1}}, reflect.TypeFor[[]Line](), `unknown field "Ends" in Line at [1] (fields: start, End, Tags); did you mean "End"?`},
		{map[string]any{"k": map[string]any{"W": 1}}, reflect.TypeFor[map[string]Point](), `unknown field "W" in Point at ["k"] (fields: X, Y)`},
		{map[string]any{"X": 1, "x": 2}, reflect.TypeFor[Point](), `fields "X" and "x" both name X in Point (fields: X, Y)`},
	}
	for _, c := range cases {
		_, err := names.CheckFields(c.x, c.t, never, false)
		if err == nil || err.Error() != c.want {
			t.Errorf("CheckFields(%v, %v): %v, want %q", c.x, c.t, err, c.want)
			continue
		}
		var tm spi.TypeMismatch
		if !errors.As(error(err), &tm) || tm.Got() != "a map with "+c.want {
			t.Errorf("Got() of %v: not \"a map with \" + Error()", err)
		}
	}
}

func TestCheckFieldsDropsUnknownKeys(t *testing.T) {
	x := map[string]any{"x": 1, "Z": 2, "Y": 3, "y": 4}
	changed, err := names.CheckFields(x, reflect.TypeFor[Point](), never, true)
	if err != nil || !changed {
		t.Fatalf("CheckFields: changed %v, %v", changed, err)
	}
	if want := map[string]any{"X": 1, "Y": 3}; !reflect.DeepEqual(x, want) {
		t.Fatalf("kept %v, want %v", x, want)
	}
}

func TestMsgpackNamesPreferTheMsgpackTag(t *testing.T) {
	type T struct {
		A int `msgpack:"a" json:"aa"`
		B int `json:"b"`
		C int `msgpack:"-" json:"c"`
	}
	_, err := generic.Names{"msgpack", "json"}.CheckFields(map[string]any{"zz": 1}, reflect.TypeFor[T](), never, false)
	if err == nil || err.Error() != `unknown field "zz" in T (fields: a, b)` {
		t.Fatalf("CheckFields: %v", err)
	}
}

func TestFixInterfaces(t *testing.T) {
	type T struct {
		A any
		B []any
		M map[string]any
		P *T
		n any
	}
	v := T{A: 1, B: []any{2, "s"}, M: map[string]any{"k": 3}, P: &T{A: 4}, n: 5}
	double := func(x any) (any, error) {
		if i, ok := x.(int); ok {
			return i * 10, nil
		}
		return x, nil
	}
	if err := generic.FixInterfaces(reflect.ValueOf(&v).Elem(), never, double); err != nil {
		t.Fatal(err)
	}
	if v.A != 10 || v.B[0] != 20 || v.M["k"] != 30 || v.P.A != 40 || v.n != 5 {
		t.Fatalf("fixed %+v (P %+v)", v, *v.P)
	}
	if generic.MayHoldInterface(reflect.TypeFor[Point](), never) || !generic.MayHoldInterface(reflect.TypeFor[T](), never) {
		t.Fatal("MayHoldInterface: Point holds no interface, T does")
	}
}

// tester82 #4: Dubbo's "class" type hint (a string) is dropped in a
// struct with no field it matches, at any depth, strict or not; a struct
// with such a field keeps it, and a "class" that is no string is still an
// unknown field.
func TestCheckFieldsDropsDubboClassHint(t *testing.T) {
	type Item struct{ SKU string }
	type Order struct {
		ID    int
		Items []Item
	}
	type Classy struct {
		Class string `json:"class"`
	}
	type Upper struct{ Class string }
	names := generic.Names{"json"}
	never := func(reflect.Type) bool { return false }
	for _, drop := range []bool{false, true} {
		x := map[string]any{"class": "com.foo.Order", "ID": 7, "Items": []any{map[string]any{"class": "com.foo.Item", "SKU": "A-1"}}}
		changed, err := names.CheckFields(x, reflect.TypeFor[Order](), never, drop)
		if err != nil || !changed {
			t.Fatalf("drop=%v: changed %v, %v; want the class hints dropped", drop, changed, err)
		}
		if _, ok := x["class"]; ok || len(x) != 2 {
			t.Fatalf("drop=%v: %v; want class gone", drop, x)
		}
		if item := x["Items"].([]any)[0].(map[string]any); len(item) != 1 || item["SKU"] != "A-1" {
			t.Fatalf("drop=%v: item %v; want class gone", drop, item)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Classy](), reflect.TypeFor[Upper]()} {
		x := map[string]any{"class": "gold"}
		if _, err := names.CheckFields(x, typ, never, false); err != nil || len(x) != 1 || (x["class"] != "gold" && x["Class"] != "gold") {
			t.Fatalf("%v: %v, %v; want the class field kept", typ, x, err)
		}
	}
	x := map[string]any{"class": 3, "ID": 7}
	if _, err := names.CheckFields(x, reflect.TypeFor[Order](), never, false); err == nil || err.Field != "class" {
		t.Fatalf("a numeric class: %v; want unknown field \"class\"", err)
	}
}

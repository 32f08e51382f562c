package msgpack_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
)

type afOrder struct {
	Customer string
	Note     string
}

type afPair struct {
	_msgpack struct{} `msgpack:",as_array"`
	A        string
	B        int
}

// An array read into a struct is a *TypeError whatever its length (nu78
// finding 3: an empty one read as the zero struct, one of one element per
// field as the fields in order), through pointers too; a struct declared
// array-encoded (as_array) still reads its own array, and time.Time its
// legacy [sec, nsec].
func TestArrayIntoStructRefusedWhateverItsLength(t *testing.T) {
	const why = "want a map (an object) with msgpack_test.afOrder's fields"
	for _, c := range []struct {
		sent   []any
		target any
		got    string
	}{
		{[]any{}, new(afOrder), "an array ([]), " + why},
		{[]any{"c", "n"}, new(afOrder), `an array (["c","n"]), ` + why},
		{[]any{"x"}, new(afOrder), `an array (["x"]), ` + why},
		{[]any{}, new(*afOrder), "an array ([]), " + why},
	} {
		err := afDecode(body(t, c.sent), c.target)
		var te *msgpack.TypeError
		if !errors.As(err, &te) || te.Got() != c.got {
			t.Errorf("%#v into %T: %v, want a *msgpack.TypeError got %q", c.sent, c.target, err, c.got)
		}
	}

	var p afPair
	pair := afPair{A: "a", B: 2}
	if err := afDecode(body(t, &pair), &p); err != nil || p.A != "a" || p.B != 2 {
		t.Errorf("as_array struct = %+v, %v; want its fields read from its array", p, err)
	}
	var tm time.Time
	if err := afDecode(body(t, []any{int64(5), int64(0)}), &tm); err != nil || tm.Unix() != 5 {
		t.Errorf("[5, 0] into time.Time = %v, %v; want the legacy form read", tm, err)
	}
	var o afOrder
	obj := map[string]any{"customer": "c"}
	if err := afDecode(body(t, obj), &o); err != nil || o.Customer != "c" {
		t.Errorf("map into struct = %+v, %v", o, err)
	}
}

// afDecode decodes b, one value, into target.
func afDecode(b []byte, target any) error {
	return msgpack.Codec{}.NewDecoder(bytes.NewReader(b)).Decode(target)
}

type afBox struct {
	Items []afOrder
	ByKey map[string]afOrder
	First *afOrder
	Tags  []string
	Pair  afPair
	At    time.Time
	Zed   *afOrder
}

// fix-aj #3: an array read into a struct inside the value (a field's
// struct, a slice's element, a map's value, through a pointer; keys
// matched ignoring case) is refused as at the top, naming its path; it
// was read as a zero struct, or as the fields in order. Arrays elsewhere
// (a []string), an as_array struct's own array and time.Time's legacy
// [sec, nsec] inside still decode.
func TestArrayIntoNestedStructRefusedNamingItsPath(t *testing.T) {
	const why = "want a map (an object) with msgpack_test.afOrder's fields"
	for _, c := range []struct {
		sent any
		path string
	}{
		{map[string]any{"Items": []any{[]any{}}}, "afBox.Items[0]"},
		{map[string]any{"items": []any{map[string]any{"Customer": "c"}, []any{"c", "n"}}}, "afBox.Items[1]"},
		{map[string]any{"ByKey": map[string]any{"k": []any{}}}, `afBox.ByKey["k"]`},
		{map[string]any{"Tags": []any{"a"}, "First": []any{"c", "n"}}, "afBox.First"},
		{map[string]any{"Pair": []any{"a", 2}, "Zed": []any{}}, "afBox.Zed"}, // as_array's own array is no finding
	} {
		var box afBox
		err := afDecode(body(t, c.sent), &box)
		var pe *msgpack.PathError
		if !errors.As(err, &pe) || pe.Path != c.path || !strings.Contains(pe.Inner(), "got an array") || !strings.Contains(pe.Inner(), why) {
			t.Errorf("%#v into afBox: %v (%+v), want a *msgpack.PathError at %s: got an array, %s", c.sent, err, box, c.path, why)
		}
	}
	var slice []afOrder
	if err := afDecode(body(t, []any{[]any{}}), &slice); err == nil {
		t.Errorf("[[]] into []afOrder = %+v, want an error", slice)
	}
	var m map[string]*afOrder
	if err := afDecode(body(t, map[string]any{"k": []any{"c", "n"}}), &m); err == nil {
		t.Errorf(`{"k":["c","n"]} into map[string]*afOrder = %+v, want an error`, m)
	}

	var box afBox
	ok := map[string]any{"Tags": []any{"a", "b"}, "Items": []any{map[string]any{"customer": "c"}},
		"Pair": []any{"a", 2}, "At": []any{int64(5), int64(0)}}
	if err := afDecode(body(t, ok), &box); err != nil || len(box.Tags) != 2 || box.Items[0].Customer != "c" || box.Pair.B != 2 || box.At.Unix() != 5 {
		t.Errorf("arrays that fit into afBox = %+v, %v; want them read", box, err)
	}
}

package msgpack_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// inner is what a caller may have put in an any field: a pointer to it is
// decoded into in place.
type inner struct{ A, B int }

// holder is a reply struct with an any field, reused from an earlier call.
type holder struct {
	V    any
	Keep string
}

// decodeWith encodes body with c and decodes it into target.
func decodeWith(t *testing.T, c spi.Codec, body, target any) error {
	t.Helper()
	var buf bytes.Buffer
	enc := c.NewEncoder(&buf)
	if err := enc.Encode(body); err != nil {
		t.Fatal(err)
	}
	spi.Release(enc)
	dec := c.NewDecoder(bytes.NewReader(buf.Bytes()))
	defer spi.Release(dec)
	return dec.Decode(target)
}

// A reply target whose interfaces already hold values (a Go consumer's
// reply variable reused from an earlier call) panicked inside msgpack for
// a map there ("reflect.Value.Addr of unaddressable value", which the
// kernel turned into CLIENT_ERROR "panic calling ...") and failed for any
// other kind ("invalid code=81 decoding string/bytes length"). It now
// decodes as with the json codec (encoding/json's rule): into the value
// when it is a non-nil pointer, else the value read replaces it; a nil
// sets it to nil, an absent field keeps it.
func TestDecodeIntoInterfacesHoldingValues(t *testing.T) {
	shared := &inner{A: 1, B: 2}
	cases := []struct {
		name   string
		target func() any // a fresh target holding values, per codec
		body   any
		want   any // *target after the decode
	}{
		{"map replaces a map", func() any { return &holder{V: map[string]any{"x": int64(1)}} },
			map[string]any{"V": map[string]any{"a": 1}}, holder{V: map[string]any{"a": int64(1)}}},
		{"map replaces a string", func() any { return &holder{V: "old"} },
			map[string]any{"V": map[string]any{"a": 1}}, holder{V: map[string]any{"a": int64(1)}}},
		{"string replaces a string", func() any { return &holder{V: "old"} },
			map[string]any{"V": "new"}, holder{V: "new"}},
		{"int replaces an int", func() any { return &holder{V: int64(5)} },
			map[string]any{"V": 7}, holder{V: int64(7)}},
		{"array replaces an array", func() any { return &holder{V: []any{int64(1)}} },
			map[string]any{"V": []any{2, "b"}}, holder{V: []any{int64(2), "b"}}},
		{"nil resets", func() any { return &holder{V: map[string]any{"x": 1}} },
			map[string]any{"V": nil}, holder{}},
		{"absent keeps", func() any { return &holder{V: "old"} },
			map[string]any{"Keep": "k"}, holder{V: "old", Keep: "k"}},
		{"pointer decoded in place", func() any { return &holder{V: shared} },
			map[string]any{"V": map[string]any{"A": 5}}, holder{V: &inner{A: 5, B: 2}}},
		{"pointer keys ignoring case", func() any { return &holder{V: &inner{A: 1, B: 2}} },
			map[string]any{"V": map[string]any{"b": 9, "Extra": true}}, holder{V: &inner{A: 1, B: 9}}},
		{"nil resets a pointer", func() any { return &holder{V: &inner{A: 1}} },
			map[string]any{"V": nil}, holder{}},
		{"nil pointer replaced", func() any { return &holder{V: (*inner)(nil)} },
			map[string]any{"V": map[string]any{"A": 5}}, holder{V: map[string]any{"A": int64(5)}}},
		{"[]any elements", func() any { return &[]any{"x", map[string]any{"k": 1}, &inner{A: 1}} },
			[]any{map[string]any{"a": 1}, 2, map[string]any{"B": 7}},
			[]any{map[string]any{"a": int64(1)}, int64(2), &inner{A: 1, B: 7}}},
		{"[]any shorter", func() any { return &[]any{"x", "y", "z"} },
			[]any{1}, []any{int64(1)}},
		{"[]holder grown", func() any { return &[]holder{{V: "old"}} },
			[]any{map[string]any{"V": 1}, map[string]any{"V": []any{2}}, map[string]any{"Keep": "k"}},
			[]holder{{V: int64(1)}, {V: []any{int64(2)}}, {Keep: "k"}}},
		{"[]holder within capacity", func() any { s := make([]holder, 1, 4); s[:4][2].V = "stale"; return &s },
			[]any{map[string]any{"V": 1}, map[string]any{"V": 2}, map[string]any{"V": 3}},
			[]holder{{V: int64(1)}, {V: int64(2)}, {V: int64(3)}}},
		{"nested struct pointer", func() any { return &struct{ H *holder }{&holder{V: "old"}} },
			map[string]any{"H": map[string]any{"V": map[string]any{"a": 1}}},
			struct{ H *holder }{&holder{V: map[string]any{"a": int64(1)}}}},
		{"*any holding a pointer", func() any { var x any = &inner{A: 1, B: 2}; return &x },
			map[string]any{"A": 3}, any(&inner{A: 3, B: 2})},
		{"*any holding a map", func() any { var x any = map[string]any{"old": 1}; return &x },
			map[string]any{"a": 1}, any(map[string]any{"a": int64(1)})},
	}
	for _, c := range []spi.Codec{msgpack.Codec{}, json.Codec{}} {
		t.Run(c.Name(), func(t *testing.T) {
			for _, tc := range cases {
				target := tc.target()
				if err := decodeWith(t, c, tc.body, target); err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if got := reflect.ValueOf(target).Elem().Interface(); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
				}
			}
		})
	}
	// decoded in place: the caller's pointer is the one filled
	for _, c := range []spi.Codec{msgpack.Codec{}, json.Codec{}} {
		p := &inner{A: 1, B: 2}
		h := holder{V: p}
		if err := decodeWith(t, c, map[string]any{"V": map[string]any{"A": 5}}, &h); err != nil || h.V != any(p) || *p != (inner{5, 2}) {
			t.Errorf("%s: V = %#v (%+v), want the same pointer holding {5 2}: %v", c.Name(), h.V, *p, err)
		}
	}
}

// A map[string]any reply reused holds values in its interfaces too: the
// keys sent get the values sent in both codecs (msgpack replaces the whole
// map, as it always did; encoding/json keeps the other keys).
func TestDecodeIntoMapHoldingValues(t *testing.T) {
	for _, c := range []spi.Codec{msgpack.Codec{}, json.Codec{}} {
		m := map[string]any{"V": "x", "W": map[string]any{"q": 1}, "P": &inner{A: 1}}
		body := map[string]any{"V": map[string]any{"a": 1}, "W": []any{1}, "P": "s"}
		if err := decodeWith(t, c, body, &m); err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		want := map[string]any{"V": map[string]any{"a": int64(1)}, "W": []any{int64(1)}, "P": "s"}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s: got %#v, want %#v", c.Name(), m, want)
		}
	}
}

// A second Decode from one body into the same reused target works too,
// and a value msgpack cannot put in the interface's pointer is an error,
// not a panic.
func TestDecodeIntoReusedTargetTwice(t *testing.T) {
	var buf bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&buf)
	for _, v := range []any{map[string]any{"V": map[string]any{"a": 1}}, map[string]any{"V": map[string]any{"b": 2}}, map[string]any{"V": map[string]any{"c": 3}}} {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(buf.Bytes()))
	defer spi.Release(dec)
	var h holder
	for _, want := range []string{"a", "b"} {
		if err := dec.Decode(&h); err != nil {
			t.Fatal(err)
		}
		if m, ok := h.V.(map[string]any); !ok || len(m) != 1 || m[want] == nil {
			t.Fatalf("V = %#v, want the map with %q", h.V, want)
		}
	}
	n := 1
	h.V = &n
	err := dec.Decode(&h)
	if err == nil || h.V != any(&n) {
		t.Errorf("a map into the *int held: %v, V = %#v; want an error and V kept", err, h.V)
	}
}

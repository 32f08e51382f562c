package msgpack_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// nilRecord has a field of each kind a nil resets.
type nilRecord struct {
	Tags   []string
	Ints   []int
	Attrs  map[string]string
	Counts map[string]int
	Blob   []byte
	Ptr    *int
	Nested [][]string
	ByKey  map[string][]string
	Pair   [2][]string
	Keep   string // absent from the encoded value: kept
}

// A nil read into a target that holds a value sets it to nil at every
// depth — a *[]string, a []string field, map values, array elements —
// as the json codec does, where msgpack left a []string as it was (a
// reply reused across calls kept its old value, one made empty up front
// stayed empty). Absent struct fields are kept, as with json.
func TestNilResetsTargetsThatHoldValues(t *testing.T) {
	for _, c := range []spi.Codec{msgpack.Codec{}, json.Codec{}} {
		t.Run(c.Name(), func(t *testing.T) {
			var buf bytes.Buffer
			enc := c.NewEncoder(&buf)
			values := []any{nil, nil, nil,
				map[string]any{"Tags": nil, "Ints": nil, "Attrs": nil, "Counts": nil, "Blob": nil, "Ptr": nil, "Nested": nil,
					"ByKey": map[string]any{"a": nil}, "Pair": []any{nil, []string{"y"}}},
				[]any{nil, []string{"z"}}}
			for _, v := range values {
				if err := enc.Encode(v); err != nil {
					t.Fatal(err)
				}
			}
			one := 1
			s, m, b := []string{}, map[string]int{"a": 1}, []string{"old"}
			rec := nilRecord{Tags: []string{"x"}, Ints: []int{1}, Attrs: map[string]string{"a": "b"}, Counts: map[string]int{"a": 1},
				Blob: []byte("x"), Ptr: &one, Nested: [][]string{{"x"}}, ByKey: map[string][]string{"a": {"x"}},
				Pair: [2][]string{{"x"}, {"x"}}, Keep: "kept"}
			list := [][]string{{"x"}, {"x"}}
			dec := c.NewDecoder(bytes.NewReader(buf.Bytes()))
			for _, p := range []any{&s, &m, &b, &rec, &list} {
				if err := dec.Decode(p); err != nil {
					t.Fatalf("decode into %T: %v", p, err)
				}
			}
			if s != nil || m != nil || b != nil {
				t.Errorf("top level: %#v %#v %#v, want nil", s, m, b)
			}
			want := nilRecord{ByKey: map[string][]string{"a": nil}, Pair: [2][]string{nil, {"y"}}, Keep: "kept"}
			if !reflect.DeepEqual(rec, want) {
				t.Errorf("struct:\n got %#v\nwant %#v", rec, want)
			}
			if len(list) != 2 || list[0] != nil || !reflect.DeepEqual(list[1], []string{"z"}) {
				t.Errorf("slice elements: %#v, want [nil [z]]", list)
			}
		})
	}
}

package msgpack_test

import (
	"bytes"
	"errors"
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

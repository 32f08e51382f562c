package msgpack_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/spi"
)

// body encodes values one after another, as a consumer writes arguments.
func body(t *testing.T, values ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&b)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestTypeErrorSaysWhatWasSent(t *testing.T) {
	type req struct{ N int }
	cases := []struct {
		sent   any
		target any
		got    string
	}{
		{123, new(string), "an integer (123)"},
		{int64(-1 << 40), new([]byte), "an integer (-1099511627776)"},
		{"x", new(int), `a string ("x")`},
		{strings.Repeat("é", 30), new(int64), `a string ("` + strings.Repeat("é", 20) + `"…)`},
		{1.5, new(bool), "a float (1.5)"},
		{2.5, new(int), "a float (2.5)"},
		{2.0, new(uint8), "a float (2)"},
		{true, new(float64), "a bool (true)"},
		{[]byte("abcde"), new(int), "binary (5 bytes)"},
		{[]any{1, "a"}, new(string), `an array ([1,"a"])`},
		{map[string]any{"a": 1}, new([]string), `a map ({"a":1})`},
		{"x", new(req), `a string ("x")`},
		{time.Unix(0, 0), new(int), "a timestamp (1970-01-01T00:00:00Z)"},
	}
	for _, c := range cases {
		err := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, c.sent))).Decode(c.target)
		var te *msgpack.TypeError
		if !errors.As(err, &te) {
			t.Errorf("%#v into %T: error %v, want a *msgpack.TypeError", c.sent, c.target, err)
			continue
		}
		if te.Got() != c.got {
			t.Errorf("%#v into %T: Got() = %q, want %q", c.sent, c.target, te.Got(), c.got)
		}
		var tm spi.TypeMismatch
		if !errors.As(err, &tm) || tm.Got() != c.got {
			t.Errorf("%#v into %T: not an spi.TypeMismatch saying %q: %v", c.sent, c.target, c.got, err)
		}
		if errors.Unwrap(err) == nil || !strings.HasPrefix(errors.Unwrap(err).Error(), "msgpack: ") {
			t.Errorf("%#v into %T: the cause %v is not msgpack's error", c.sent, c.target, errors.Unwrap(err))
		}
	}
}

func TestTypeErrorText(t *testing.T) {
	err := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, 123))).Decode(new(string))
	if want := "msgpack: decode into *string: got an integer (123)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestTypeErrorNamesTheValueItFailedOn(t *testing.T) {
	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, "first", map[string]any{"k": []any{1}}, 7, "fourth")))
	var s string
	var m map[string]any
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	err := dec.Decode(&s)
	var te *msgpack.TypeError
	if !errors.As(err, &te) || te.Got() != "an integer (7)" {
		t.Fatalf("third value: %v, want got an integer (7)", err)
	}
	if err := dec.Decode(&s); err == nil {
		t.Error("a Decode after a failed one succeeded: errors must stay sticky")
	}
}

// A mismatch inside a value (a struct field) is a *PathError naming the
// field, which wraps msgpack's own error.
func TestMismatchInsideAValueNamesItsPath(t *testing.T) {
	type req struct{ N int }
	err := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, map[string]any{"N": "x"}))).Decode(new(req))
	var pe *msgpack.PathError
	if !errors.As(err, &pe) || pe.Got() != `a map with req.N: cannot decode into int: got a string ("x")` {
		t.Fatalf("a map with a bad field into a struct: %v, want a *PathError naming req.N", err)
	}
	if !strings.Contains(errors.Unwrap(err).Error(), "decoding int64") {
		t.Errorf("error %v lost msgpack's text as its cause", err)
	}
}

func TestStreamMismatchKeepsMsgpackError(t *testing.T) {
	// A reader that is not a body in memory cannot be read again.
	r := io.MultiReader(bytes.NewReader(body(t, 123)))
	err := msgpack.Codec{}.NewDecoder(r).Decode(new(string))
	var te *msgpack.TypeError
	if err == nil || errors.As(err, &te) {
		t.Fatalf("stream: %v, want msgpack's own error", err)
	}
	data, err := vm.Marshal(123)
	if err != nil {
		t.Fatal(err)
	}
	if err := (msgpack.Codec{}).NewDecoder(bytes.NewReader(data)).Decode(new(int)); err != nil {
		t.Errorf("good value: %v", err)
	}
}

// TypeErrorOf describes msgpack's own Unmarshal error, as the plugin SDK
// gets it, and leaves other errors alone.
func TestTypeErrorOf(t *testing.T) {
	data, err := vm.Marshal(123)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	uerr := vm.Unmarshal(data, &s)
	got := msgpack.TypeErrorOf(data, &s, uerr)
	var te *msgpack.TypeError
	if !errors.As(got, &te) || te.Got() != "an integer (123)" || !errors.Is(got, uerr) {
		t.Errorf("TypeErrorOf(123 into *string) = %v, want got an integer (123) wrapping %v", got, uerr)
	}
	var n int
	if got := msgpack.TypeErrorOf(data[:0], &n, io.EOF); got != io.EOF {
		t.Errorf("TypeErrorOf(empty data) = %v, want the error unchanged", got)
	}
	hostile := []byte{0xc6, 0xff, 0xff, 0xff, 0xff} // 4 GiB of binary declared
	if got := msgpack.TypeErrorOf(hostile, &n, io.ErrUnexpectedEOF); got != io.ErrUnexpectedEOF {
		t.Errorf("TypeErrorOf(hostile length) = %v, want the error unchanged", got)
	}
}

// A target msgpack refuses itself (nil, not a pointer) keeps its error.
func TestBadTargetIsNotATypeError(t *testing.T) {
	for _, target := range []any{nil, "not a pointer"} {
		err := msgpack.Codec{}.NewDecoder(bytes.NewReader(body(t, 1))).Decode(target)
		var te *msgpack.TypeError
		if err == nil || errors.As(err, &te) {
			t.Errorf("Decode(%#v): %v, want msgpack's own error", target, err)
		}
	}
}

package msgpack

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/spi"
)

// TypeError is a Decode error for a value that the target's type cannot
// hold: an integer read into a *string, a string into a *int, an array
// into a *struct, or a value of a kind the type takes but not in a form it
// reads (a string that is not base64 for a *[]byte, not RFC 3339 for a
// *time.Time; anything for an interface with methods). It says what was
// sent in a user's terms — Error() is "msgpack: decode into *string: got
// an integer (123)" — and wraps msgpack's own error ("invalid code=d3
// decoding string/bytes length"), which Unwrap returns.
//
// Decode returns one only when the body is in memory (bytes.Reader,
// strings.Reader: the decoder goes back to read the value); a mismatch
// deeper inside a value (a struct field) is a *PathError naming where.
type TypeError struct {
	// Target is the type decoded into, as %T prints it ("*string").
	Target string
	// Kind is the value's kind with its article: "nil", "a bool",
	// "an integer", "a float", "a string", "binary", "an array", "a map",
	// "a timestamp" or "an ext".
	Kind string
	// Value is a short rendering of the value ("123", `"hello"`,
	// "5 bytes", `{"a":1}`), at most about 40 characters; "" when it
	// could not be read.
	Value string
	// Why says why a value of a kind the target takes does not fit it
	// ("want base64 (illegal base64 data at input byte 4)"); "" when the
	// kind is the mismatch.
	Why string
	// Err is msgpack's error.
	Err error

	t reflect.Type // the type decoded into, without Target's first pointer
}

// Mismatch returns what the type wants and what was sent
// (spi.Mismatched): {Want: "an integer", Kind: "a string", Value: `"x"`}.
func (e *TypeError) Mismatch() spi.Mismatch { return mismatchOf("", e.t, e.Kind, e.Value, e.Why, nil) }

// Got returns the value as "<kind> (<value>)", or the kind alone when the
// value could not be read, then ", <why>" when there is a reason: "an
// integer (123)" (spi.TypeMismatch).
func (e *TypeError) Got() string { return got(e.Kind, e.Value, e.Why) }

// Error returns "msgpack: decode into <target>: got " and Got.
func (e *TypeError) Error() string {
	return "msgpack: decode into " + e.Target + ": got " + e.Got()
}

// Unwrap returns msgpack's error.
func (e *TypeError) Unwrap() error { return e.Err }

var (
	_ spi.TypeMismatch = (*TypeError)(nil)
	_ spi.Mismatched   = (*TypeError)(nil)
	_ spi.Mismatched   = (*PathError)(nil)
	_ spi.Mismatched   = (*RangeError)(nil)
)

// typeError returns Decode's error for err, msgpack's failure to decode
// value number d.n of the body into target: a *TypeError or *PathError
// saying what was sent and where (explain), else err wrapped with the
// target.
func (d *Decoder) typeError(target any, err error) error { return d.explain(target, err) }

// TypeErrorOf returns, for the error err of decoding data, one MessagePack
// value, into target with msgpack itself (vmihailenco/msgpack's Unmarshal,
// as the plugin SDK decodes arguments), a *TypeError describing the value
// when its kind is what target's type cannot hold; else err unchanged. Call
// it only with an error: it reads data again.
func TypeErrorOf(data []byte, target any, err error) error {
	d := Codec{}.NewDecoder(bytes.NewReader(data)).(*Decoder)
	defer d.Release()
	if d.err != nil { // a length beyond the data: do not read it
		return err
	}
	if te := d.mismatch(target, err); te != nil {
		return te
	}
	return err
}

// mismatch returns the *TypeError for err, msgpack's failure to decode
// value number d.n of the body into target, or nil when the body cannot be
// read again or the value's kind is one target's type takes (the mismatch
// is deeper inside, or something else failed). It reads the value again
// from the body's start (skipping the d.n values before it), so it only
// runs on failure: a good call pays nothing. The decoder is failed for good
// by then, so where it leaves the body does not matter.
func (d *Decoder) mismatch(target any, err error) *TypeError {
	t := reflect.TypeOf(target)
	if d.body == nil || d.check.start < 0 || t == nil || t.Kind() != reflect.Pointer {
		return nil // msgpack refused the target itself (nil, not a pointer)
	}
	if !d.rewind() {
		return nil
	}
	c, perr := d.d.PeekCode()
	if perr != nil {
		return nil
	}
	kind := kindOf(c)
	if kind == "" || accepts(t, c) {
		return nil
	}
	d.depth = 0
	te := &TypeError{Target: fmt.Sprintf("%T", target), Kind: kind, Err: err, t: t.Elem()}
	if v, verr := d.decodeAny(); verr == nil {
		te.Value = generic.Preview(v)
		if _, ok := v.(time.Time); ok {
			te.Kind = "a timestamp"
		}
	}
	return te
}

// kindOf names the kind of the value whose first byte is c, with its
// article; "" for a byte that starts no value.
func kindOf(c byte) string {
	switch {
	case c == msgpcode.Nil:
		return "nil"
	case c == msgpcode.True || c == msgpcode.False:
		return "a bool"
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Uint64, c >= msgpcode.Int8 && c <= msgpcode.Int64:
		return "an integer"
	case c == msgpcode.Float || c == msgpcode.Double:
		return "a float"
	case msgpcode.IsString(c):
		return "a string"
	case msgpcode.IsBin(c):
		return "binary"
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return "an array"
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return "a map"
	case msgpcode.IsExt(c):
		return "an ext"
	}
	return ""
}

var (
	typeOfTime              = reflect.TypeFor[time.Time]()
	typeOfCustomDecoder     = reflect.TypeFor[vm.CustomDecoder]()
	typeOfUnmarshaler       = reflect.TypeFor[vm.Unmarshaler]()
	typeOfBinaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	typeOfTextUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// accepts reports whether msgpack may decode a value whose first byte is c
// into t (a pointer type, as Decode takes): true when it takes that kind,
// and for the types that decode themselves (whose kinds nobody can tell),
// so that a false means the kind itself was the mismatch.
func accepts(t reflect.Type, c byte) bool {
	if c == msgpcode.Nil {
		return true
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(typeOfCustomDecoder) || t.Implements(typeOfUnmarshaler) ||
			t.Implements(typeOfBinaryUnmarshaler) || t.Implements(typeOfTextUnmarshaler) {
			return true
		}
		t = t.Elem()
	}
	k := kindOf(c)
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Bool:
		return k == "a bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return k == "an integer" // msgpack reads no float into an integer
	case reflect.Float32, reflect.Float64:
		return k == "an integer" || k == "a float"
	case reflect.String:
		return k == "a string" || k == "binary"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return k == "a string" || k == "binary" || k == "an array"
		}
		return k == "an array"
	case reflect.Map:
		return k == "a map"
	case reflect.Struct:
		if t == typeOfTime {
			return k == "an ext" || k == "a string" || k == "an array" // jsonforms.go; DecodeTime's legacy [sec, nsec]
		}
		return k == "a map" || k == "an array"
	}
	return true
}

// plural returns word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

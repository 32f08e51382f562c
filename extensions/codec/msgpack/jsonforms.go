package msgpack

import (
	"encoding/base64"
	"reflect"
	"strconv"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
)

// A generic caller (`airnode call`, Dubbo's generic invocation; a gateway;
// Reference.Invoke with maps) has what JSON has: strings, numbers, maps,
// arrays. encoding/json gives three of its strings a meaning that typed Go
// values have: a []byte is standard base64, a time.Time is RFC 3339, and a
// map[int]V's keys are decimal. msgpack read the same strings otherwise: a
// string into a []byte was its text's bytes (so `call Bytes '"aGk="'` stored
// the 4 bytes "aGk=" where codec=json stored "hi", and call prints []byte
// results as base64), a string into a time.Time inside a struct failed
// ("invalid code=b4 decoding ext len"; only a top-level one was parsed), a
// nil there panicked inside msgpack, and a string key into a map[int]V
// failed. The decoders below, registered with vm.Register like ints.go's,
// read those strings as encoding/json does, and take msgpack's own forms
// (binary, the timestamp extension, integer keys) exactly as before: what
// a Go consumer sends is read by the same code, after one peek at the
// value's first byte. They serve every msgpack decoding in the process
// (the library's table is process-wide), as ints.go's do.

var typeOfBytes = reflect.TypeFor[[]byte]()

// registerJSONForms registers, with registerInts (before the first encoder
// or decoder of this package exists), the decoders of []byte and
// time.Time, and of their pointer types. Named byte slices (type Blob
// []byte) and maps with integer keys are registered per type, the first
// time a type holding one comes here (registerTypes).
func registerJSONForms() {
	registerDecoder(typeOfBytes, decodeBytes)
	registerDecoder(typeOfTime, decodeTime)
}

// decodeBytes decodes a byte slice at v (of kind slice of uint8): a string
// is, for a Decoder after GenericArguments (a generic call), standard
// base64 (encoding/json's []byte; an invalid one is a *formError), and
// otherwise its own bytes (a Go consumer's string, which msgpack writes as
// str where it writes a []byte as bin), an array is one integer 0..255 per byte (as encoding/json
// reads [104,105]), binary and nil are read as msgpack reads them, into
// v's own storage when it has room.
func decodeBytes(d *vm.Decoder, v reflect.Value) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case msgpcode.IsString(c):
		var b []byte
		if _, generic := genericDecoders.Load(d); generic {
			b, err = readBase64(d)
		} else {
			b, err = d.DecodeBytes() // a string's bytes, in a new slice
		}
		if err == nil {
			v.SetBytes(b)
		}
		return err
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil {
			return err
		}
		b := make([]byte, 0, min(n, 1<<16)) // n comes from the wire
		for range n {
			u, err := readUint(d, typeOfUint8)
			if err != nil {
				return err
			}
			b = append(b, byte(u))
		}
		v.SetBytes(b)
		return nil
	}
	n, err := d.DecodeBytesLen() // binary or nil; anything else is msgpack's error, as before
	if err != nil {
		return err
	}
	if n == -1 {
		v.SetZero()
		return nil
	}
	b := v.Bytes() // as msgpack's readN: reuse the target's storage when it has room
	if b == nil || n > cap(b) {
		b = make([]byte, n)
	} else {
		b = b[:n]
	}
	if err := d.ReadFull(b); err != nil {
		return err
	}
	v.SetBytes(b)
	return nil
}

// readBase64 reads a string and decodes it as encoding/json decodes a
// []byte: standard base64 with padding (base64.StdEncoding; line breaks
// ignored).
func readBase64(d *vm.Decoder) ([]byte, error) {
	s, err := d.DecodeBytes() // a string's bytes
	if err != nil {
		return nil, err
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		return nil, &formError{want: "base64", value: string(s), err: err}
	}
	return b[:n], nil
}

// decodeTime decodes a time.Time at v: a string is RFC 3339
// (time.Time.UnmarshalText, as encoding/json; an invalid one is a
// *formError), a nil is the zero time, and anything else is read by
// msgpack's DecodeTime (the timestamp extension, -1 or 13, or its legacy
// [seconds, nanoseconds] array).
func decodeTime(d *vm.Decoder, v reflect.Value) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	var t time.Time
	switch {
	case c == msgpcode.Nil:
		err = d.DecodeNil()
	case msgpcode.IsString(c):
		t, err = readTimeString(d)
	default:
		t, err = d.DecodeTime()
	}
	if err != nil {
		return err
	}
	if v.CanAddr() {
		*v.Addr().Interface().(*time.Time) = t // without boxing t
	} else {
		v.Set(reflect.ValueOf(t))
	}
	return nil
}

// readTimeString reads a string as an RFC 3339 time, as encoding/json
// reads one into a time.Time.
func readTimeString(d *vm.Decoder) (time.Time, error) {
	s, err := d.DecodeBytes()
	if err != nil {
		return time.Time{}, err
	}
	var t time.Time
	if err := t.UnmarshalText(s); err != nil {
		return time.Time{}, &formError{want: "an RFC 3339 time", value: string(s), err: err}
	}
	return t, nil
}

// formError is a string that is not in the form its target reads: not
// base64 for a []byte, not RFC 3339 for a time.Time. Decode's callers see
// it through the *TypeError or *PathError that says where it was.
type formError struct {
	want  string // "base64", "an RFC 3339 time"
	value string // the string sent
	err   error  // the parser's error
}

func (e *formError) Error() string {
	return "got a string (" + generic.Preview(e.value) + "), want " + e.want + ": " + e.err.Error()
}

func (e *formError) Unwrap() error { return e.err }

// intKey reports whether t is a map whose keys encoding/json reads from
// decimal strings: an integer key type that does not decode itself from
// text (encoding/json prefers UnmarshalText).
func intKey(t reflect.Type) bool {
	if t.Kind() != reflect.Map {
		return false
	}
	k := t.Key()
	if kk := k.Kind(); kk < reflect.Int || kk > reflect.Uintptr {
		return false
	}
	return !k.Implements(typeOfTextUnmarshaler) && !reflect.PointerTo(k).Implements(typeOfTextUnmarshaler)
}

// decodeIntKeyMap decodes a map with integer keys at v (registered for
// each such map type by registerTypes): a string key is decimal, as
// encoding/json reads the keys of a JSON object into a map[int]V (an
// invalid or out-of-range one is a *keyError); integer keys are read as
// msgpack reads them, through the checked integer decoders. Like
// msgpack's, a nil sets the map to nil and a map that exists is added to.
func decodeIntKeyMap(d *vm.Decoder, v reflect.Value) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	t := v.Type()
	if n == -1 {
		v.SetZero()
		return nil
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, min(n, 1024))) // n comes from the wire
	}
	kt, et := t.Key(), t.Elem()
	for range n {
		k := reflect.New(kt).Elem()
		if err := decodeMapKey(d, k); err != nil {
			return err
		}
		e := reflect.New(et).Elem()
		if err := d.DecodeValue(e); err != nil {
			return err
		}
		v.SetMapIndex(k, e)
	}
	return nil
}

// decodeMapKey decodes the integer map key at k: a string as
// encoding/json parses one, anything else as msgpack decodes k's type.
func decodeMapKey(d *vm.Decoder, k reflect.Value) error {
	if c, err := d.PeekCode(); err != nil || !msgpcode.IsString(c) {
		return d.DecodeValue(k)
	}
	s, err := d.DecodeString()
	if err != nil {
		return err
	}
	return parseKey(s, k)
}

// parseKey sets k, of an integer kind, to the decimal s (encoding/json's
// rule for map keys), or returns a *keyError.
func parseKey(s string, k reflect.Value) error {
	if kk := k.Kind(); kk >= reflect.Uint && kk <= reflect.Uintptr {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil || k.OverflowUint(u) {
			return &keyError{key: s, t: k.Type()}
		}
		k.SetUint(u)
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || k.OverflowInt(n) {
		return &keyError{key: s, t: k.Type()}
	}
	k.SetInt(n)
	return nil
}

// keyError is a map key that is not a decimal integer of the map's key
// type.
type keyError struct {
	key string
	t   reflect.Type
}

func (e *keyError) Error() string {
	return "key " + generic.Preview(e.key) + " is not a decimal " + e.t.String()
}

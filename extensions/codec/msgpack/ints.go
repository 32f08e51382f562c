package msgpack

import (
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/spi"
)

// msgpack reads any integer into any integer type and truncates it there
// (decodeInt64Value: reflect's SetInt; DecodeInt8: int8(n)), so 300 read
// into an int8 was 44 and a uint64 18446744073709551615 into an int64 was
// -1, with no error, where encoding/json and protobuf refuse. This file
// reads integers with a range check instead: Decode's typed targets
// (*int8 ... *uint64) here, and every integer inside a typed target (a
// struct field, a slice or map element, a pointer) through decoders
// registered with vm.Register, the library's process-wide table of
// decoders by type — once for the predeclared integer types, and for each
// named integer type (type Level int8) the first time a type holding it is
// encoded or decoded here. msgpack freezes a struct's field decoders the
// first time it meets the struct, so a struct type that code outside this
// package encoded or decoded with msgpack directly before it came here
// keeps msgpack's truncation in its fields (pointer types are registered
// too, so a *int8 met before is checked). The check costs a peek at the
// value's first byte and a comparison or two per integer and never
// allocates; only a refused integer does (BenchmarkDecoderInts).

// RangeError is a Decode error for an integer that its target integer type
// cannot hold: 300 read into an int8, -1 into a uint16, 2^63 into an
// int64. Error() is "integer 300 out of range for int8 (-128..127)"; Got()
// (spi.TypeMismatch) is "an integer (300), out of range -128..127", so that
// the provider's BAD_REQUEST reads "argument 0: cannot decode into int8:
// got an integer (300), out of range -128..127". Decode returns it wrapped
// with the type decoded into (errors.As finds it); a consumer's reply is
// then a BAD_RESPONSE.
type RangeError struct {
	// Target is the integer type, as reflect prints it: "int8", "main.Level".
	Target string
	// Value is the integer sent, in decimal: "300", "-1".
	Value string
	// Min and Max are the bounds of Target, in decimal: "-128", "127".
	Min, Max string
	// Float marks a float sent for a float32 ("1e+300", bounds
	// "-3.4e+38", "3.4e+38"): the messages say "float", not "integer".
	Float bool
}

// Error returns "integer <value> out of range for <target> (<min>..<max>)"
// ("float ..." for a float).
func (e *RangeError) Error() string {
	return e.kind() + " " + e.Value + " out of range for " + e.Target + " (" + e.Min + ".." + e.Max + ")"
}

// Got returns "an integer (<value>), out of range <min>..<max>" ("a float
// (...)" for a float).
func (e *RangeError) Got() string {
	a := "an integer"
	if e.Float {
		a = "a float"
	}
	return a + " (" + e.Value + "), out of range " + e.Min + ".." + e.Max
}

// Mismatch returns the range wanted and the number sent
// (spi.Mismatched): {Want: "an integer in -128..127", Kind: "an integer",
// Value: "300"}.
func (e *RangeError) Mismatch() spi.Mismatch {
	m := spi.Mismatch{Want: "an integer in " + e.Min + ".." + e.Max, Kind: "an integer", Value: e.Value}
	if e.Float {
		m.Want, m.Kind = "a number in "+e.Min+".."+e.Max, "a float"
	}
	return m
}

func (e *RangeError) kind() string {
	if e.Float {
		return "float"
	}
	return "integer"
}

var _ spi.TypeMismatch = (*RangeError)(nil)

// rangeError returns the *RangeError for value (its decimal text) read into
// t, an integer type.
func rangeError(t reflect.Type, value string) *RangeError {
	e := &RangeError{Target: t.String(), Value: value, Min: "0"}
	switch bits := t.Bits(); {
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr:
		e.Max = strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	default:
		e.Min = strconv.FormatInt(math.MinInt64>>(64-bits), 10)
		e.Max = strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	}
	return e
}

// readInt reads an integer for t, a signed integer type: a value beyond
// t's bounds is a *RangeError, and anything msgpack's DecodeInt64 refuses
// (a float, a string) is its error. A nil reads as 0, as msgpack reads it.
func readInt(d *vm.Decoder, t reflect.Type) (int64, error) {
	c, err := d.PeekCode()
	if err != nil {
		return 0, err
	}
	if c == msgpcode.Uint64 { // the only code DecodeInt64 wraps: above MaxInt64
		u, err := d.DecodeUint64()
		if err != nil {
			return 0, err
		}
		if u > math.MaxInt64 {
			return 0, rangeError(t, strconv.FormatUint(u, 10))
		}
		return checkInt(int64(u), t)
	}
	n, err := d.DecodeInt64()
	if err != nil {
		return 0, err
	}
	return checkInt(n, t)
}

func checkInt(n int64, t reflect.Type) (int64, error) {
	if bits := t.Bits(); bits < 64 {
		if lo := int64(-1) << (bits - 1); n < lo || n > ^lo {
			return 0, rangeError(t, strconv.FormatInt(n, 10))
		}
	}
	return n, nil
}

// readUint reads an integer for t, an unsigned integer type: a negative
// value or one above t's maximum is a *RangeError, and anything msgpack's
// DecodeUint64 refuses is its error. A nil reads as 0.
func readUint(d *vm.Decoder, t reflect.Type) (uint64, error) {
	c, err := d.PeekCode()
	if err != nil {
		return 0, err
	}
	var u uint64
	if c >= msgpcode.NegFixedNumLow || (c >= msgpcode.Int8 && c <= msgpcode.Int64) { // signed: may be negative
		n, err := d.DecodeInt64()
		if err != nil {
			return 0, err
		}
		if n < 0 {
			return 0, rangeError(t, strconv.FormatInt(n, 10))
		}
		u = uint64(n)
	} else if u, err = d.DecodeUint64(); err != nil {
		return 0, err
	}
	if bits := t.Bits(); bits < 64 && u>>bits != 0 {
		return 0, rangeError(t, strconv.FormatUint(u, 10))
	}
	return u, nil
}

// decodeIntValue is the registered decoder of the signed integer types.
func decodeIntValue(d *vm.Decoder, v reflect.Value) error {
	n, err := readInt(d, v.Type())
	if err != nil {
		return err
	}
	v.SetInt(n)
	return nil
}

// decodeUintValue is the registered decoder of the unsigned integer types.
func decodeUintValue(d *vm.Decoder, v reflect.Value) error {
	u, err := readUint(d, v.Type())
	if err != nil {
		return err
	}
	v.SetUint(u)
	return nil
}

var (
	typeOfInt    = reflect.TypeFor[int]()
	typeOfInt8   = reflect.TypeFor[int8]()
	typeOfInt16  = reflect.TypeFor[int16]()
	typeOfInt32  = reflect.TypeFor[int32]()
	typeOfInt64  = reflect.TypeFor[int64]()
	typeOfUint   = reflect.TypeFor[uint]()
	typeOfUint8  = reflect.TypeFor[uint8]()
	typeOfUint16 = reflect.TypeFor[uint16]()
	typeOfUint32 = reflect.TypeFor[uint32]()
	typeOfUint64 = reflect.TypeFor[uint64]()
)

// registerInts installs, once per process, the checked decoders of the
// predeclared integer types (vm.Register), before the first encoder or
// decoder of this package exists: msgpack's struct field decoders are
// fixed when it first meets a struct, encoding or decoding.
var registerInts = sync.OnceFunc(func() {
	for _, t := range []reflect.Type{typeOfInt, typeOfInt8, typeOfInt16, typeOfInt32, typeOfInt64,
		typeOfUint, typeOfUint8, typeOfUint16, typeOfUint32, typeOfUint64} {
		registerInt(t)
	}
	registerFloat32()
	registerJSONForms()
})

// registerInt registers the checked decoder of t, an integer type, and of
// *t: msgpack's decoder of a pointer type holds the decoder of its element
// as it was when msgpack first met the pointer type, so one built before
// (by code using msgpack directly) would keep truncating.
func registerInt(t reflect.Type) {
	dec := decodeIntValue
	if k := t.Kind(); k >= reflect.Uint && k <= reflect.Uintptr {
		dec = decodeUintValue
	}
	registerDecoder(t, dec)
}

// registerDecoder registers dec as the decoder of t and, through its
// element, of *t.
func registerDecoder(t reflect.Type, dec func(*vm.Decoder, reflect.Value) error) {
	vm.Register(reflect.Zero(t).Interface(), nil, dec)
	vm.Register(reflect.Zero(reflect.PointerTo(t)).Interface(), nil, func(d *vm.Decoder, v reflect.Value) error {
		if c, err := d.PeekCode(); err == nil && c == msgpcode.Nil { // as msgpack: a nil sets the pointer to nil
			v.SetZero()
			return d.DecodeNil()
		}
		if v.IsNil() {
			v.Set(reflect.New(t))
		}
		return dec(d, v.Elem())
	})
}

// decodeScalarPtr decodes into v when it is a non-nil pointer to a
// predeclared integer type, a float32, a []byte or a time.Time, which
// msgpack's Decode reads itself, without its registered decoders
// (truncating an integer, taking a string's bytes for a []byte). It
// reports whether v was one.
func (d *Decoder) decodeScalarPtr(v any) (bool, error) {
	var (
		n   int64
		u   uint64
		err error
	)
	switch p := v.(type) {
	case *int:
		if p != nil {
			if n, err = readInt(d.d, typeOfInt); err == nil {
				*p = int(n)
			}
			return true, err
		}
	case *int8:
		if p != nil {
			if n, err = readInt(d.d, typeOfInt8); err == nil {
				*p = int8(n)
			}
			return true, err
		}
	case *int16:
		if p != nil {
			if n, err = readInt(d.d, typeOfInt16); err == nil {
				*p = int16(n)
			}
			return true, err
		}
	case *int32:
		if p != nil {
			if n, err = readInt(d.d, typeOfInt32); err == nil {
				*p = int32(n)
			}
			return true, err
		}
	case *int64:
		if p != nil {
			if n, err = readInt(d.d, typeOfInt64); err == nil {
				*p = n
			}
			return true, err
		}
	case *uint:
		if p != nil {
			if u, err = readUint(d.d, typeOfUint); err == nil {
				*p = uint(u)
			}
			return true, err
		}
	case *uint8:
		if p != nil {
			if u, err = readUint(d.d, typeOfUint8); err == nil {
				*p = uint8(u)
			}
			return true, err
		}
	case *uint16:
		if p != nil {
			if u, err = readUint(d.d, typeOfUint16); err == nil {
				*p = uint16(u)
			}
			return true, err
		}
	case *uint32:
		if p != nil {
			if u, err = readUint(d.d, typeOfUint32); err == nil {
				*p = uint32(u)
			}
			return true, err
		}
	case *uint64:
		if p != nil {
			if u, err = readUint(d.d, typeOfUint64); err == nil {
				*p = u
			}
			return true, err
		}
	case *float32: // float32.go
		if p != nil {
			var f float32
			if f, err = readFloat32(d.d); err == nil {
				*p = f
			}
			return true, err
		}
	case *[]byte: // jsonforms.go
		if p != nil {
			return true, decodeBytes(d.d, reflect.ValueOf(p).Elem())
		}
	case *time.Time:
		if p != nil {
			return true, decodeTime(d.d, reflect.ValueOf(p).Elem())
		}
	}
	return false, nil
}

// registered remembers the types whose inner types registerTypes has
// registered (reflect.Type → struct{}).
var registered sync.Map

// registerTypes registers the decoders msgpack needs per type for every
// type that v's type t holds — itself, in its struct fields, elements, map
// keys and values, pointers — once per t: the checked integer decoder of
// each named integer type (type Level int8), and jsonforms.go's decoders
// of each named byte slice (type Blob []byte) and each map with integer
// keys (map[int]string). A type that decodes itself (opaque) is left
// alone, as is what is inside it; one encoded through MarshalText gets
// text.go's encoder (a str). The predeclared integers, []byte and
// time.Time are registerInts'. last is the encoder's or decoder's memory
// of the last type it registered, so that a pooled one meeting the same
// type again (a method's arguments, body after body) skips the lookup.
func registerTypes(v any, last *reflect.Type) {
	if plain(v) {
		return
	}
	t := reflect.TypeOf(v)
	if t == *last || !mayNeedDecoder(t) {
		return
	}
	if _, ok := registered.Load(t); !ok {
		walkTypes(t, map[reflect.Type]bool{})
		registered.Store(t, struct{}{})
	}
	*last = t
}

func walkTypes(t reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	if textMarshaled(t) {
		registerText(t) // text.go
	}
	if opaque(t) {
		return
	}
	switch k := t.Kind(); {
	case k >= reflect.Int && k <= reflect.Uint64:
		if namedInt(t) {
			registerInt(t)
		}
	case namedBytes(t):
		registerDecoder(t, decodeBytes)
	case k == reflect.Pointer, k == reflect.Slice, k == reflect.Array:
		walkTypes(t.Elem(), seen)
	case k == reflect.Map:
		if intKey(t) {
			registerDecoder(t, decodeIntKeyMap)
		}
		walkTypes(t.Key(), seen)
		walkTypes(t.Elem(), seen)
	case k == reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				walkTypes(f.Type, seen)
			}
		}
	}
}

// plain reports whether v is one of the exchange's common values, or a
// pointer to one, which hold no type registerTypes registers: one type
// switch, where reflect's methods cost tens of nanoseconds per value
// encoded.
func plain(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64, []byte, []any, map[string]any, map[string]string,
		*string, *bool, *float64, *[]byte, *[]any, *map[string]any, *map[string]string, *any:
		return true
	}
	return false
}

// mayNeedDecoder reports, in a few comparisons, whether t may hold a type
// registerTypes registers: false for the common arguments (a string, a
// []byte, a map[string]string, a []any, a *string) so that their Encode
// and Decode skip registerTypes' lookup; true for a struct and for
// anything holding a composite type, which registerTypes walks once.
func mayNeedDecoder(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		e := t.Elem()
		return composite(e) || namedInt(e) || namedBytes(t) || textMarshaled(e)
	case reflect.Map:
		k, e := t.Key(), t.Elem()
		return composite(k) || composite(e) || namedInt(k) || namedInt(e) || intKey(t) || textMarshaled(e)
	}
	return namedInt(t) || textMarshaled(t)
}

func composite(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	return false
}

// namedInt reports whether t is an integer type other than the predeclared
// ones (compared by identity: PkgPath is slow).
func namedInt(t reflect.Type) bool {
	if k := t.Kind(); k < reflect.Int || k > reflect.Uint64 {
		return false
	}
	switch t {
	case typeOfInt, typeOfInt8, typeOfInt16, typeOfInt32, typeOfInt64,
		typeOfUint, typeOfUint8, typeOfUint16, typeOfUint32, typeOfUint64:
		return false
	}
	return true
}

// namedBytes reports whether t is a byte slice other than []byte (type
// Blob []byte, []MyByte), which msgpack and encoding/json read as []byte.
func namedBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && t != typeOfBytes && !opaque(t)
}

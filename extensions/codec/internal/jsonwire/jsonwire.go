// Package jsonwire implements the json codec (see extensions/codec/json,
// which registers it): the protobuf codec reads a generic JSON argument with
// it too, and an extension imports no other extension.
package jsonwire

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/internal/gotype"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this codec.
const Name = "json"

// ID is the codec's wire id in the frame flags.
const ID uint8 = 2

// Codec is the json codec. The zero value is ready to use.
type Codec struct{}

// Name returns "json".
func (Codec) Name() string { return Name }

// ID returns 2.
func (Codec) ID() uint8 { return ID }

// NewEncoder returns an encoder writing one JSON text and a newline per value
// to w.
//
// The encoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewEncoder(w io.Writer) spi.Encoder {
	e := encoders.Get().(*Encoder)
	e.w.w = w
	e.e = *json.NewEncoder(&e.w) // encoding/json's Encoder has no Reset: a fresh copy
	e.e.SetEscapeHTML(false)
	e.released = false
	return e
}

// encoders and decoders pool the wrappers, which hold encoding/json's
// Encoder and Decoder by value: a request body (BenchmarkRequest) is encoded
// with 3 allocations, not 5 (80 B, not 184), and decoded with 12, not 14
// (1040 B, not 1368); json.Decoder's read buffer cannot be kept (no Reset).
var encoders = sync.Pool{New: func() any { return new(Encoder) }}

// NewDecoder returns a decoder reading JSON texts from r. It buffers, so it
// may read beyond the values it returns. Numbers read into generic values
// are exact (see the package doc).
//
// The decoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewDecoder(r io.Reader) spi.Decoder {
	d := decoders.Get().(*Decoder)
	d.d = *json.NewDecoder(r) // no Reset either
	d.d.UseNumber()
	d.released = false
	d.body, d.start = nil, 0
	if b, ok := r.(bodyReader); ok {
		if start, err := b.Seek(0, io.SeekCurrent); err == nil {
			d.body, d.start = b, start
		}
	}
	return d
}

// bodyReader is a body in memory (bytes.Reader, strings.Reader, as the
// exchange passes it): a value that failed can be read again to say why.
type bodyReader interface {
	io.ReaderAt
	io.Seeker
}

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// Encoder writes JSON texts.
type Encoder struct {
	e        json.Encoder
	w        utf8Writer // e's writer: refuses a text with bytes that are not UTF-8 (utf8.go)
	released bool
}

// Release drops e's writer and returns e to the pool; e must not be used
// again (an Encode after Release fails). A second Release does nothing.
func (e *Encoder) Release() {
	if e.released {
		return
	}
	e.released = true
	e.e = json.Encoder{}
	e.w.w = nil
	if cap(e.w.bad) > 64<<10 {
		e.w.bad = nil
	}
	encoders.Put(e)
}

// Release drops d's reader and buffer and returns d to the pool; d must not
// be used again (a Decode after Release fails). The values it decoded stay
// valid. A second Release does nothing.
func (d *Decoder) Release() {
	if d.released {
		return
	}
	d.released = true
	d.d, d.body = json.Decoder{}, nil
	decoders.Put(d)
}

var errReleased = errors.New("used after Release")

// Encode writes v. A value encoding/json cannot encode (a channel, a func, a
// NaN, a cycle) is an *spi.Error of status SERIALIZATION_ERROR naming its
// type, and so is a string holding bytes that are not UTF-8, which JSON
// cannot carry (encoding/json would write U+FFFD in their place), naming
// where and the byte offset: "json: encode main.Order: Order.customer:
// invalid UTF-8 at byte offset 3 (0xe9): ...". Nothing is written then.
func (e *Encoder) Encode(v any) error {
	if e.released {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, errReleased)
	}
	if err := e.reserve(v); err != nil {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, err)
	}
	if err := e.e.Encode(v); errors.Is(err, errReplaced) {
		if where := invalidUTF8(v); where != "" {
			return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %s: JSON carries UTF-8 text only (encoding/json would send U+FFFD in its place); send bytes as a []byte (base64), or use codec=msgpack or protobuf, which carry a string's bytes", v, where)
		}
		if _, err := e.w.w.Write(e.w.bad); err != nil { // \ufffd written by a MarshalJSON itself
			return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, err)
		}
	} else if err != nil {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, err)
	}
	return nil
}

// reserve asks e's writer, when it is an spi.Reserver (the exchange's
// request body, bounded by the payload limit), for the least room v's
// text takes when v is a []byte (base64 in quotes) or a string (in
// quotes): encoding/json encodes a value whole before writing it, so a
// 64 MiB []byte over an 8 MiB limit took 4 s to refuse.
func (e *Encoder) reserve(v any) error {
	r, ok := e.w.w.(spi.Reserver)
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case []byte:
		return r.Reserve(base64.StdEncoding.EncodedLen(len(v)) + 2)
	case string:
		return r.Reserve(len(v) + 2)
	}
	return nil
}

// Decoder reads JSON texts.
type Decoder struct {
	d        json.Decoder
	released bool
	body     bodyReader // the body in memory, nil for a stream
	start    int64      // where the body began in it
}

// Decode reads the next JSON text into v, a non-nil pointer. At the end of
// the input the error wraps io.EOF. Numbers that land in an interface
// value (v a *any, or an any inside v) are int64, uint64 or float64 as the
// package doc says; one beyond float64's range is an error. Object keys
// match struct fields ignoring case (encoding/json); after
// DisallowUnknownFields a key naming no field is an error, except Dubbo's
// "class" type hint with a string value, which is dropped
// (generic.CheckFields). An error names
// the type at the end of v's pointers as a Go programmer writes it
// (internal/gotype.Target), and so does the text it wraps: "json: decode
// into wrapperspb.StringValue: json: cannot unmarshal string into Go value
// of type wrapperspb.StringValue" for the **wrapperspb.StringValue the
// kernel passes for a *wrapperspb.StringValue parameter, "json: decode
// into []byte: ... Go value of type []byte" for a *[]byte.
func (d *Decoder) Decode(v any) error {
	if d.released {
		return &decodeError{v, errReleased}
	}
	before := d.d.InputOffset()
	if err := d.d.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			fe, refit := d.fieldError(v, before)
			switch {
			case fe != nil:
				return &decodeError{v, fe}
			case refit == nil:
				return &decodeError{v, err}
			}
			// Only Dubbo's "class" type hints named no field: decode the
			// value without them, as strictly.
			b, merr := json.Marshal(refit)
			if merr != nil {
				return &decodeError{v, err}
			}
			again := json.NewDecoder(bytes.NewReader(b))
			again.UseNumber()
			again.DisallowUnknownFields()
			if err := again.Decode(v); err != nil {
				return &decodeError{v, err}
			}
		case errors.As(err, &ute):
			if me := d.mismatchError(v, before, err); me != nil {
				return me
			}
			return &decodeError{v, err}
		default:
			return &decodeError{v, err}
		}
	}
	if err := exactNumbers(v); err != nil {
		return &decodeError{v, err}
	}
	return nil
}

// decodeError is Decode's error: "json: decode into <target>: <err>", the
// target and the Go types in err's text (encoding/json's "Go value of type
// []uint8") written as a Go programmer writes them (internal/gotype). It
// unwraps to err (io.EOF, *json.UnmarshalTypeError, *generic.FieldError).
type decodeError struct {
	v   any // Decode's argument
	err error
}

func (e *decodeError) Error() string {
	return "json: decode into " + gotype.Target(e.v) + ": " + gotype.Clean(e.err.Error())
}

func (e *decodeError) Unwrap() error { return e.err }

// The provider's kernel calls DisallowUnknownFields (spi.StrictDecoder).
var _ spi.StrictDecoder = (*Decoder)(nil)

// DisallowUnknownFields makes every later Decode fail for an object key
// that names no field of the struct it is decoded into, even ignoring case
// (encoding/json's Decoder.DisallowUnknownFields); the provider calls it
// before decoding a call's arguments. From a body in memory the error is a
// *generic.FieldError (spi.TypeMismatch) naming the key, the struct, its
// fields and the nearest one: `unknown field "z" in Point (fields: X, Y);
// did you mean "Y"?`.
func (d *Decoder) DisallowUnknownFields() { d.d.DisallowUnknownFields() }

// fieldError reads again the value that encoding/json refused for an
// unknown field (it reads a whole value before decoding it, so the value
// lies between before and the input offset now) and returns the key, the
// struct and its fields; nil when the body is not in memory. When the
// only keys naming no field were Dubbo's "class" type hints
// (generic.CheckFields drops them), fe is nil and refit is the value
// without them, to decode again.
func (d *Decoder) fieldError(v any, before int64) (fe *generic.FieldError, refit any) {
	t := reflect.TypeOf(v)
	if d.body == nil || t == nil || t.Kind() != reflect.Pointer {
		return nil, nil
	}
	raw := make([]byte, d.d.InputOffset()-before)
	if _, err := d.body.ReadAt(raw, d.start+before); err != nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return nil, nil
	}
	changed, fe := jsonNames.CheckFields(x, t.Elem(), opaque, false)
	if fe != nil || !changed {
		return fe, nil
	}
	return nil, x
}

// jsonNames names struct fields as encoding/json does: the json tag, else
// the Go name.
var jsonNames = generic.Names{"json"}

var (
	typeOfUnmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	typeOfTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports whether t decodes itself, so that what is inside it is
// not the codec's: encoding/json calls its UnmarshalJSON or UnmarshalText.
func opaque(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(typeOfUnmarshaler) || p.Implements(typeOfUnmarshaler) ||
		t.Implements(typeOfTextUnmarshaler) || p.Implements(typeOfTextUnmarshaler)
}

// exactNumbers turns the json.Numbers that UseNumber left in the interface
// values of v, the target just decoded, into int64, uint64 or float64.
func exactNumbers(v any) (err error) {
	switch p := v.(type) {
	case *any:
		*p, err = exact(*p)
	case *map[string]any:
		_, err = exact(*p)
	case *[]any:
		_, err = exact(*p)
	case *string, *int, *int64, *float64, *bool, *[]byte: // no interface inside
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Pointer && !rv.IsNil() {
			err = generic.FixInterfaces(rv.Elem(), opaque, exact)
		}
	}
	return err
}

// exact returns x, a generic value, with its json.Numbers (at any depth)
// replaced by number's; maps and slices are changed in place.
func exact(x any) (any, error) {
	switch x := x.(type) {
	case json.Number:
		return number(x)
	case map[string]any:
		for k, e := range x {
			n, err := exact(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := exact(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return x, nil
}

// number returns n as an int64 when it is an integer that fits, else a
// uint64 when it fits there, else a float64 (the nearest; 1.0 and 1e3 are
// float64 too, as msgpack reads a float); a number beyond float64's range
// is an error.
func number(n json.Number) (any, error) {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %s is beyond the range of float64", s)
	}
	return f, nil
}

var (
	_ spi.Codec    = Codec{}
	_ spi.Encoder  = (*Encoder)(nil)
	_ spi.Decoder  = (*Decoder)(nil)
	_ spi.Releaser = (*Encoder)(nil)
	_ spi.Releaser = (*Decoder)(nil)
)

package protobuf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/airnode/airnode/extensions/codec/internal/protocycle"
	"github.com/airnode/airnode/internal/gotype"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this codec.
const Name = "protobuf"

// ID is the codec's wire id in the frame flags.
const ID uint8 = 3

// Kind is the byte that starts every value in a protobuf-codec body. After
// it come: nothing (KindNil, KindFalse, KindTrue); a zigzag varint
// (KindInt); a varint (KindUint); 8 bytes of IEEE 754 little-endian
// (KindFloat); a varint length and the bytes (KindString, KindBytes); a
// varint count and that many key/value pairs of length-prefixed strings
// (KindStringMap); a length-prefixed message full name, then the
// length-prefixed message wire encoding (KindMessage); a varint length and
// a JSON text (KindJSON: a generic map or array, see jsonform.go). Varints
// and zigzag are protocol buffers' own.
type Kind byte

// The kinds of value.
const (
	KindNil Kind = iota
	KindFalse
	KindTrue
	KindInt
	KindUint
	KindFloat
	KindString
	KindBytes
	KindStringMap
	KindMessage
	KindJSON
)

// Codec is the protobuf codec. The zero value is ready to use.
type Codec struct{}

// Name returns "protobuf".
func (Codec) Name() string { return Name }

// ID returns 3.
func (Codec) ID() uint8 { return ID }

// NewEncoder returns an encoder writing to w, one Write per value.
//
// The encoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewEncoder(w io.Writer) spi.Encoder {
	e := encoders.Get().(*Encoder)
	e.w = w
	e.r, _ = w.(spi.Reserver)
	return e
}

// encoders pools Encoders with their scratch, which starts at 256 bytes, a
// typical header and small argument (measured: 5 allocations per request
// body down to 3; pooled, 2 down to 0).
var encoders = sync.Pool{New: func() any { return &Encoder{buf: make([]byte, 0, 256)} }}

// maxPooledScratch is the largest scratch buffer an encoder or decoder keeps
// when it goes back to the pool (fmt's printer pool has the same rule).
const maxPooledScratch = 64 << 10

// NewDecoder returns a decoder reading from r. A r that is not an
// io.ByteReader is buffered, so the decoder may read beyond the values it
// returns.
//
// The decoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewDecoder(r io.Reader) spi.Decoder {
	d := decoders.Get().(*Decoder)
	d.err, d.strict, d.genericArgs = nil, false, false
	br, ok := r.(byteReader)
	if !ok {
		if d.br == nil {
			d.br = bufio.NewReader(r)
		} else {
			d.br.Reset(r)
		}
		d.r = d.br
		return d
	}
	d.r = br
	d.left, _ = r.(interface{ Len() int }) // bytes.Reader, bytes.Buffer
	return d
}

// decoders pools Decoders with their scratch and, for streams, their
// buffered reader.
var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// Encoder writes values.
type Encoder struct {
	w   io.Writer
	r   spi.Reserver // w when it is one (a request body under a payload limit), else nil
	buf []byte       // one value, reused
}

// Release drops e's writer and returns e to the pool; e must not be used
// again (an Encode after Release fails). A second Release does nothing.
func (e *Encoder) Release() {
	if e.w == nil {
		return
	}
	e.w, e.r = nil, nil
	if cap(e.buf) > maxPooledScratch {
		e.buf = make([]byte, 0, 256)
	}
	encoders.Put(e)
}

// Encode writes v: a proto.Message, nil, a bool, string, []byte, integer,
// float or map[string]string. Any other type is an *spi.Error of status
// SERIALIZATION_ERROR naming it, a generic map[string]any or []any too
// (its KindJSON form is read but not yet sent, see jsonform.go); so is a message that reaches itself (a
// google.protobuf.Struct holding itself: "encountered a cycle via
// google.protobuf.Struct") or nests more than 10000 messages, which
// proto.Marshal would recurse into until a fatal stack overflow (see
// extensions/codec/internal/protocycle). When the writer is an
// spi.Reserver (the exchange's request body, bounded by the payload
// limit), a message, []byte or string is sized first (proto.Size, its
// length) and one that does not fit is refused with the writer's error,
// unencoded: a 64 MiB message over an 8 MiB limit took 1.5 s to encode
// before the exchange refused it.
func (e *Encoder) Encode(v any) error {
	if e.w == nil {
		return spi.Errorf(spi.StatusSerializationError, "protobuf: encode %T: %w", v, errReleased)
	}
	b, err := appendValue(e.buf[:0], v, e.r)
	if err != nil {
		return err
	}
	e.buf = b
	if _, err := e.w.Write(b); err != nil {
		return spi.Errorf(spi.StatusSerializationError, "protobuf: write %T: %w", v, err)
	}
	return nil
}

// appendValue appends v's encoding to b; r, when not nil, is asked for
// the room of a message, []byte or string before it is encoded (b then
// holds only v's bytes so far: Encode writes each value at once).
func appendValue(b []byte, v any, r spi.Reserver) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, byte(KindNil)), nil
	case proto.Message:
		m := v.ProtoReflect()
		if !m.IsValid() { // a typed nil message
			return append(b, byte(KindNil)), nil
		}
		name := m.Descriptor().FullName()
		if err := protocycle.Check(v); err != nil { // proto.Marshal would overflow the stack (fatal)
			return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode %s: %w", name, err)
		}
		b = append(b, byte(KindMessage))
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		opts := proto.MarshalOptions{UseCachedSize: true}
		size := opts.Size(v)
		b = binary.AppendUvarint(b, uint64(size))
		if r != nil {
			if err := r.Reserve(len(b) + size); err != nil {
				return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode %s: %w", name, err)
			}
		}
		b, err := opts.MarshalAppend(b, v)
		if err != nil {
			return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode %s: %w", name, err)
		}
		return b, nil
	case bool:
		if v {
			return append(b, byte(KindTrue)), nil
		}
		return append(b, byte(KindFalse)), nil
	case string:
		if err := reserveBytes(r, len(v)); err != nil {
			return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode string: %w", err)
		}
		return appendBytes(append(b, byte(KindString)), v), nil
	case []byte:
		if err := reserveBytes(r, len(v)); err != nil {
			return nil, spi.Errorf(spi.StatusSerializationError, "protobuf: encode []byte: %w", err)
		}
		return appendBytes(append(b, byte(KindBytes)), v), nil
	case int:
		return appendInt(b, int64(v)), nil
	case int64:
		return appendInt(b, v), nil
	case int32:
		return appendInt(b, int64(v)), nil
	case int16:
		return appendInt(b, int64(v)), nil
	case int8:
		return appendInt(b, int64(v)), nil
	case uint:
		return appendUint(b, uint64(v)), nil
	case uint64:
		return appendUint(b, v), nil
	case uint32:
		return appendUint(b, uint64(v)), nil
	case uint16:
		return appendUint(b, uint64(v)), nil
	case uint8:
		return appendUint(b, uint64(v)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, byte(KindFloat)), math.Float64bits(v)), nil
	case float32:
		return binary.LittleEndian.AppendUint64(append(b, byte(KindFloat)), math.Float64bits(float64(v))), nil
	case map[string]any, []any:
		// KindJSON is read (by providers of this build on) but not sent:
		// a provider built before it answers BAD_REQUEST "unknown value
		// kind 10", and nothing tells a consumer which build a provider
		// runs. Sending it waits for an opt-in an old provider ignores
		// (docs/wire.md, Versioning): readers first, writers later.
		name := gotype.String(reflect.TypeOf(v))
		return nil, &spi.Error{Status: spi.StatusSerializationError, Cause: jsonNotSent(name),
			Message: "protobuf: cannot encode Go type " + name + ": a JSON object or array (what airnode call and Reference.Invoke send) is not sent under codec=protobuf, " +
				"which providers of earlier builds cannot read; set the URL key codec=json on the reference (airnode call: -p codec=json; a provider reads every codec; json reads a message " +
				"from its Go struct's encoding/json form, not protojson's: int64 as a number, a Timestamp as {\"seconds\":N}), " +
				"or, from Go, send a value of the parameter's own type (the message type, or a map[string]string for a map[string]string parameter)"}
	case map[string]string:
		if v == nil {
			return append(b, byte(KindNil)), nil
		}
		b = binary.AppendUvarint(append(b, byte(KindStringMap)), uint64(len(v)))
		for k, s := range v {
			b = appendBytes(appendBytes(b, k), s)
		}
		return b, nil
	}
	t := reflect.TypeOf(v)
	return nil, spi.Errorf(spi.StatusSerializationError,
		"protobuf: cannot encode Go type %s: want a proto.Message, or nil, bool, string, []byte, an integer, a float or map[string]string%s", gotype.String(t), notCarried(t))
}

// notCarried says why t, a type the codec does not encode, is none of
// the types it does, and what to use ("" when there is nothing to add).
func notCarried(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return ": use timestamppb.Timestamp (google.golang.org/protobuf/types/known/timestamppb) for a time"
	case t == reflect.TypeFor[time.Duration]():
		return ": use durationpb.Duration (google.golang.org/protobuf/types/known/durationpb) for a duration"
	case t.Name() != "" && t.PkgPath() != "" && scalarKind(t):
		return fmt.Sprintf(" (a named type is none of them, whatever its methods: convert it to %s, or use a proto message)", gotype.String(underlying(t)))
	case t.Kind() == reflect.Struct:
		return " (a Go struct is no proto.Message: use a generated message type, or codec=json or msgpack)"
	}
	return ""
}

// scalarKind reports whether values of t's kind are ones the codec
// encodes when unnamed (bool, string, integers, floats, []byte,
// map[string]string).
func scalarKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	case reflect.Map:
		return t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
	}
	return false
}

// underlying returns the unnamed type of t's kind, for a named scalar t
// (scalarKind): Level (an int) gives int.
func underlying(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Slice:
		return reflect.TypeFor[[]byte]()
	case reflect.Map:
		return reflect.TypeFor[map[string]string]()
	}
	for _, u := range []any{false, "", 0, int8(0), int16(0), int32(0), int64(0), uint(0), uint8(0), uint16(0), uint32(0), uint64(0), float32(0), float64(0)} {
		if ut := reflect.TypeOf(u); ut.Kind() == t.Kind() {
			return ut
		}
	}
	return t
}

// jsonNotSent is the cause of the SERIALIZATION_ERROR for a JSON object or
// array (map[string]any, []any), the Go type's name. Its message is for a
// caller; ResultMessage is for a provider whose method returned one (the
// exchange asks for it when a response fails to encode).
type jsonNotSent string

func (j jsonNotSent) Error() string {
	return "protobuf: a JSON object or array (" + string(j) + ") is not sent"
}

// ResultMessage says, for a provider, why the method's result was not sent
// under protobuf and what would be.
func (j jsonNotSent) ResultMessage() string {
	return "protobuf: the method returned a JSON object or array (" + string(j) + "), which is not sent under codec=protobuf (consumers of earlier builds cannot read it): " +
		"return a proto message for it (structpb.Struct, structpb.ListValue, or a generated type), or the caller sets the URL key codec=json or msgpack, which carry it"
}

// reserveBytes asks r (nil: nothing to ask) for the room of a string or
// []byte of n bytes: its kind byte, length and bytes.
func reserveBytes(r spi.Reserver, n int) error {
	if r == nil {
		return nil
	}
	return r.Reserve(1 + (bits.Len64(uint64(n)|1)+6)/7 + n) // uvarint: 7 bits a byte
}

func appendBytes[T string | []byte](b []byte, s T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendInt(b []byte, v int64) []byte {
	return binary.AppendVarint(append(b, byte(KindInt)), v) // zigzag
}

func appendUint(b []byte, v uint64) []byte {
	return binary.AppendUvarint(append(b, byte(KindUint)), v)
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

// Decoder reads values.
type Decoder struct {
	r           byteReader
	left        interface{ Len() int } // r, when it knows the bytes left; bounds declared lengths
	br          *bufio.Reader          // buffers a r that is no io.ByteReader; kept across bodies
	buf         []byte                 // scratch for strings and message bodies
	err         error                  // sticky: the first failed Decode, or errReleased
	strict      bool                   // DisallowUnknownFields was called
	genericArgs bool                   // GenericArguments was called
}

// DisallowUnknownFields makes every later Decode of a JSON value (KindJSON,
// what a generic caller sends) fail for an object key naming no field of
// the proto message or Go struct it fills; without it protojson drops such
// a key and a struct ignores it. The provider calls it before a call's
// arguments (spi.StrictDecoder).
func (d *Decoder) DisallowUnknownFields() { d.strict = true }

var _ spi.StrictDecoder = (*Decoder)(nil)

// GenericArguments makes every later Decode read a string into a []byte
// (or a named byte slice) as standard base64, as encoding/json reads the
// JSON a generic caller (`airnode call`, Invoke with maps) sends; without
// it a string is its own bytes (a Go consumer's string "cafe" for a []byte
// parameter arrives as the 4 bytes of "cafe"). The provider calls it
// before a generic call's arguments (spi.GenericDecoder).
func (d *Decoder) GenericArguments() { d.genericArgs = true }

var _ spi.GenericDecoder = (*Decoder)(nil)

var errReleased = errors.New("used after Release")

// Release drops d's reader and returns d to the pool; d must not be used
// again (a Decode after Release fails). The values it decoded stay valid.
// A second Release does nothing.
func (d *Decoder) Release() {
	if d.err == errReleased {
		return
	}
	d.r, d.left, d.err = nil, nil, errReleased
	if d.br != nil {
		d.br.Reset(nil)
	}
	if cap(d.buf) > maxPooledScratch {
		d.buf = nil
	}
	decoders.Put(d)
}

// maxLen bounds any declared length when the reader cannot tell how much is
// left; larger lengths are read in chunks as the bytes arrive anyway.
const maxLen = 1 << 31

// chunk is the most a declared length allocates before its bytes arrive.
const chunk = 64 << 10

// Decode reads the next value into v, a non-nil pointer: *any gets a
// generic value (nil, bool, int64, uint64, float64, string, []byte,
// map[string]string, a message of a type linked into the program, or what
// codec=json makes of a JSON value); a proto.Message or a pointer to one
// gets a message of its own type, or one read from a scalar or JSON value
// by protojson (then as codec=json reads the generated struct); a pointer
// to a scalar or a map[string]string gets a value of a compatible kind
// (integers are range-checked; nil gives the zero value; a string into a
// []byte is standard base64); a JSON value into any other type is read as
// codec=json reads it. A value the target cannot take is an error
// implementing spi.TypeMismatch (`a string ("x"), want message
// google.protobuf.Int64Value (...)`). At the end of the input the
// error wraps io.EOF. Errors are sticky: after a failed Decode the stream
// may be out of step with its values, so every later Decode fails the same
// way.
func (d *Decoder) Decode(v any) error {
	if d.err == nil {
		d.err = d.decode(v)
	}
	if d.err != nil {
		return fmt.Errorf("protobuf: decode into %s: %w", targetName(v), d.err)
	}
	return nil
}

func (d *Decoder) decode(v any) error {
	kb, err := d.r.ReadByte()
	if err != nil {
		return err // io.EOF at the end of the body
	}
	k := Kind(kb)
	if m, ok := v.(proto.Message); ok {
		if !m.ProtoReflect().IsValid() {
			return errors.New("nil message")
		}
		if k == KindNil {
			proto.Reset(m)
			return nil
		}
		return d.messageOf(k, m)
	}
	if k == KindJSON && !isMessagePointer(reflect.TypeOf(v)) {
		text, err := d.bytes(nil)
		if err != nil {
			return err
		}
		return fromJSON(text, v, d.strict)
	}
	switch p := v.(type) {
	case *any:
		*p, err = d.generic(k)
		return err
	case *string:
		if k == KindNil {
			*p = ""
			return nil
		}
		if k != KindString {
			return &mismatch{got: kindPhrase(k), want: "a string"}
		}
		b, err := d.bytes(d.buf[:0])
		d.buf = b
		*p = string(b)
		return err
	case *map[string]string:
		if k == KindNil {
			*p = nil
			return nil
		}
		if k != KindStringMap {
			return &mismatch{got: kindPhrase(k), want: "a map[string]string"}
		}
		*p, err = d.stringMap()
		return err
	case *int:
		n, err := d.integer(k, reflect.Int)
		*p = int(n)
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("want a non-nil pointer")
	}
	return d.reflected(k, rv.Elem())
}

// reflected decodes a value of kind k into the settable e.
func (d *Decoder) reflected(k Kind, e reflect.Value) error {
	t := e.Type()
	if t.Implements(messageType) && t.Kind() == reflect.Pointer { // **pb.T
		if k == KindNil {
			e.SetZero()
			return nil
		}
		m := reflect.New(t.Elem())
		if err := d.messageOf(k, m.Interface().(proto.Message)); err != nil {
			return err
		}
		e.Set(m)
		return nil
	}
	if k == KindString && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		if !d.genericArgs { // a Go consumer's string: its own bytes
			b, err := d.bytes(nil)
			if err != nil {
				return err
			}
			if b == nil {
				b = []byte{} // "" is an empty string, not a nil one
			}
			e.SetBytes(b)
			return nil
		}
		s, err := d.bytes(d.buf[:0]) // a generic caller's: base64, as encoding/json
		d.buf = s
		if err != nil {
			return err
		}
		b, err := base64Bytes(s)
		if err != nil {
			return err
		}
		e.SetBytes(b)
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if k == KindInt && t.Kind() >= reflect.Uint {
			n, err := d.integer(k, reflect.Int64)
			if err != nil {
				return err
			}
			if n < 0 || e.OverflowUint(uint64(n)) {
				return fmt.Errorf("%d overflows %s", n, t)
			}
			e.SetUint(uint64(n))
			return nil
		}
		if k == KindUint {
			u, err := d.uvarint()
			if err != nil {
				return err
			}
			if t.Kind() >= reflect.Uint {
				if e.OverflowUint(u) {
					return fmt.Errorf("%d overflows %s", u, t)
				}
				e.SetUint(u)
				return nil
			}
			if u > math.MaxInt64 || e.OverflowInt(int64(u)) {
				return fmt.Errorf("%d overflows %s", u, t)
			}
			e.SetInt(int64(u))
			return nil
		}
		n, err := d.integer(k, reflect.Int64)
		if err != nil {
			return err
		}
		if e.OverflowInt(n) {
			return fmt.Errorf("%d overflows %s", n, t)
		}
		e.SetInt(n)
		return nil
	}
	g, err := d.generic(k)
	if err != nil {
		return err
	}
	if g == nil {
		e.SetZero()
		return nil
	}
	gv := reflect.ValueOf(g)
	switch {
	case gv.Type().AssignableTo(t):
		e.Set(gv)
	case gv.Kind() == reflect.Float64 && (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64):
		if f := gv.Float(); e.OverflowFloat(f) && !math.IsInf(f, 0) { // an infinity or NaN stays itself
			return &mismatch{got: "a float (" + strconv.FormatFloat(f, 'g', -1, 64) + ")", want: typeName(t),
				why: "beyond its range, ±" + strconv.FormatFloat(math.MaxFloat32, 'g', 3, 32)}
		}
		e.SetFloat(gv.Float())
	case gv.Kind() == t.Kind() && gv.Type().ConvertibleTo(t): // named string, bool, []byte types
		e.Set(gv.Convert(t))
	case (gv.Kind() == reflect.Int64 || gv.Kind() == reflect.Uint64) && (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64):
		// an integer for a float, as encoding/json and msgpack read `3`
		// (airnode call F64 3; tester63), when the float holds it exactly
		f, ok := exactFloat(gv, t.Kind() == reflect.Float32)
		if !ok {
			return &mismatch{got: fmt.Sprintf("an integer (%v)", g), want: typeName(t), why: "not exactly representable: send it as a float"}
		}
		e.SetFloat(f)
	default:
		return &mismatch{got: kindPhrase(k), want: typeName(t)}
	}
	return nil
}

var messageType = reflect.TypeFor[proto.Message]()

// exactFloat returns v, an int64 or uint64 value, as a float64 (rounded
// to float32 when f32), and whether that float is exactly v: integers up
// to 2^53 (2^24 for a float32) are, larger ones only when their low bits
// are zero.
func exactFloat(v reflect.Value, f32 bool) (float64, bool) {
	var f float64
	var back func(float64) bool
	if v.Kind() == reflect.Int64 {
		n := v.Int()
		f = float64(n)
		back = func(x float64) bool { return x >= -(1<<63) && x < 1<<63 && int64(x) == n }
	} else {
		u := v.Uint()
		f = float64(u)
		back = func(x float64) bool { return x >= 0 && x < 1<<64 && uint64(x) == u }
	}
	if f32 {
		f = float64(float32(f))
	}
	return f, back(f)
}

// integer reads a KindInt (or a KindUint that fits int64, or nil as 0).
func (d *Decoder) integer(k Kind, want reflect.Kind) (int64, error) {
	switch k {
	case KindNil:
		return 0, nil
	case KindInt:
		n, err := binary.ReadVarint(d.r)
		if err != nil {
			return 0, noEOF(err)
		}
		if want == reflect.Int && int64(int(n)) != n {
			return 0, fmt.Errorf("%d overflows int", n)
		}
		return n, nil
	case KindUint:
		u, err := d.uvarint()
		if err != nil {
			return 0, err
		}
		if u > math.MaxInt64 || want == reflect.Int && uint64(int(u)) != u {
			return 0, fmt.Errorf("%d overflows %s", u, want)
		}
		return int64(u), nil
	}
	return 0, &mismatch{got: kindPhrase(k), want: "an integer"}
}

// generic reads a value of kind k as a Go value.
func (d *Decoder) generic(k Kind) (any, error) {
	switch k {
	case KindNil:
		return nil, nil
	case KindFalse:
		return false, nil
	case KindTrue:
		return true, nil
	case KindInt:
		n, err := binary.ReadVarint(d.r)
		return n, noEOF(err)
	case KindUint:
		return d.uvarint()
	case KindFloat:
		var b [8]byte
		if _, err := io.ReadFull(d.r, b[:]); err != nil {
			return nil, noEOF(err)
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b[:])), nil
	case KindString:
		b, err := d.bytes(d.buf[:0])
		d.buf = b
		return string(b), err
	case KindBytes:
		b, err := d.bytes(nil)
		if b == nil && err == nil {
			b = []byte{}
		}
		return b, err
	case KindStringMap:
		return d.stringMap()
	case KindMessage:
		name, err := d.bytes(d.buf[:0])
		d.buf = name
		if err != nil {
			return nil, err
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		if errors.Is(err, protoregistry.NotFound) {
			return nil, fmt.Errorf("message type %s is not linked into this program (no Go package registered it with protoregistry.GlobalTypes): "+
				"a Go consumer imports the generated package of %s and decodes into its type (Reference.Call with a reply of that type); "+
				"airnode call and Reference.Invoke without that import can use the URL key codec=json (airnode call: -p codec=json), which carries the message as JSON: %w", name, name, err)
		}
		if err != nil {
			return nil, fmt.Errorf("message type %s: %w", name, err)
		}
		m := mt.New().Interface()
		return m, d.messageBody(m)
	case KindJSON:
		text, err := d.bytes(nil)
		if err != nil {
			return nil, err
		}
		var x any
		return x, fromJSON(text, &x, d.strict)
	}
	return nil, fmt.Errorf("unknown value kind %d", byte(k))
}

// messageOf reads a value of kind k (not KindNil) into m: a message of m's
// type, or a scalar or JSON value read by protojson (messageFromJSON). A
// []byte or a map[string]string (KindBytes, KindStringMap: Go types that
// no JSON value has, so only a typed Go peer sends them) is a *mismatch
// naming both types: read through its JSON form it became a base64 string
// or an object whose unknown keys were dropped, and the call went on with
// a value nobody sent (tester91 #2).
func (d *Decoder) messageOf(k Kind, m proto.Message) error {
	switch k {
	case KindMessage:
		return d.message(m)
	case KindBytes, KindStringMap:
		return &mismatch{got: "a Go " + goTypeOf(k), want: "message " + string(m.ProtoReflect().Descriptor().FullName()),
			why: fmt.Sprintf("under codec=protobuf a message is sent as a message of its type (%s), nil, or a string, number or bool in its proto3 JSON form; a %s is not converted",
				typeName(reflect.TypeOf(m)), goTypeOf(k))}
	}
	text, err := d.asJSON(k)
	if err != nil {
		return err
	}
	return messageFromJSON(text, m, d.strict)
}

// isMessagePointer reports whether t is a pointer to a pointer to a proto
// message (**pb.T), the target a **T decode fills with a new message.
func isMessagePointer(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Pointer && t.Elem().Implements(messageType)
}

// message reads a KindMessage value (after its kind byte) into m, checking
// that the names match.
func (d *Decoder) message(m proto.Message) error {
	name, err := d.bytes(d.buf[:0])
	d.buf = name
	if err != nil {
		return err
	}
	if want := m.ProtoReflect().Descriptor().FullName(); string(name) != string(want) {
		return fmt.Errorf("got message %s, want %s", name, want)
	}
	return d.messageBody(m)
}

func (d *Decoder) messageBody(m proto.Message) error {
	b, err := d.bytes(d.buf[:0])
	d.buf = b
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, m)
}

func (d *Decoder) stringMap() (map[string]string, error) {
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, min(n, 64))
	for range n {
		kb, err := d.bytes(d.buf[:0])
		d.buf = kb
		if err != nil {
			return nil, err
		}
		k := string(kb)
		vb, err := d.bytes(d.buf[:0])
		d.buf = vb
		if err != nil {
			return nil, err
		}
		m[k] = string(vb)
	}
	return m, nil
}

func (d *Decoder) uvarint() (uint64, error) {
	u, err := binary.ReadUvarint(d.r)
	return u, noEOF(err)
}

// length reads a varint length and checks it against the bytes left.
func (d *Decoder) length() (int, error) {
	u, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if u > maxLen || d.left != nil && u > uint64(d.left.Len()) {
		return 0, fmt.Errorf("declared length %d exceeds the bytes left", u)
	}
	return int(u), nil
}

// bytes reads a length-prefixed byte string, appending it to b; a length
// larger than what has arrived allocates in chunks as the bytes arrive.
func (d *Decoder) bytes(b []byte) ([]byte, error) {
	n, err := d.length()
	if err != nil {
		return b, err
	}
	for n > 0 {
		step := min(n, chunk)
		start := len(b)
		b = append(b, make([]byte, step)...)
		if _, err := io.ReadFull(d.r, b[start:]); err != nil {
			return b, noEOF(err)
		}
		n -= step
	}
	return b, nil
}

// noEOF turns an end of input inside a value into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// String names the kind for error messages ("string", "message").
func (k Kind) String() string {
	names := [...]string{"nil", "false", "true", "int", "uint", "float", "string", "bytes", "string map", "message", "JSON"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("kind %d", byte(k))
}

var (
	_ spi.Codec    = Codec{}
	_ spi.Encoder  = (*Encoder)(nil)
	_ spi.Decoder  = (*Decoder)(nil)
	_ spi.Releaser = (*Encoder)(nil)
	_ spi.Releaser = (*Decoder)(nil)
)

package msgpack

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/airnode/airnode/internal/cyclecheck"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	vm "github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this codec.
const Name = "msgpack"

// ID is the codec's wire id in the frame flags.
const ID uint8 = 1

// MaxDepth bounds the nesting of maps and arrays read into *any, so that a
// hostile body cannot exhaust the stack (encoding/json's bound), and of
// those Encode writes: a deeper value is refused, as no peer would read it.
const MaxDepth = cyclecheck.MaxDepth // 10000, what the encoder refuses beyond too

// Codec is the msgpack codec. The zero value is ready to use.
type Codec struct{}

// Name returns "msgpack".
func (Codec) Name() string { return Name }

// ID returns 1.
func (Codec) ID() uint8 { return ID }

// NewEncoder returns an encoder writing MessagePack values to w. A w that is
// an io.ByteWriter (bytes.Buffer, bufio.Writer) is written directly.
//
// The encoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewEncoder(w io.Writer) spi.Encoder {
	e := encoders.Get().(*Encoder)
	e.e.ResetWriter(w) // keeps the struct tag and compact ints set in newEncoder
	e.released = false
	return e
}

// encoders pools Encoders with their msgpack encoder: a new one per body
// cost 3 allocations (128 B) and ~180 ns, against ~50 ns in all for
// NewEncoder, one Encode of a 100-byte string and Release from the pool
// (BenchmarkEncoder: released against unreleased).
var encoders = sync.Pool{New: func() any { return newEncoder() }}

func newEncoder() *Encoder {
	registerInts()
	e := vm.NewEncoder(nil)
	e.SetCustomStructTag("json")
	e.UseCompactInts(true)
	return &Encoder{e: e}
}

// NewDecoder returns a decoder reading MessagePack values from r. A r that
// is not an io.ByteScanner is buffered, so the decoder may read beyond the
// values it returns.
//
// When r is a bytes.Reader or strings.Reader (a body in memory), the decoder
// first checks every length the body declares against the bytes it holds;
// the first Decode reports a length that does not fit.
//
// The decoder comes from a pool; its Release returns it there (see
// spi.Releaser) when the body was in memory and at most 64 KiB, so that a
// pooled decoder holds no large scratch buffer (fmt's printer pool has the
// same rule). One that is never released is garbage collected.
func (Codec) NewDecoder(r io.Reader) spi.Decoder {
	d := decoders.Get().(*Decoder)
	d.d.ResetReader(r) // keeps the struct tag and loose decoding, drops the map decoder
	d.d.SetMapDecoder(d.mapDecoder)
	d.err, d.depth, d.reuse, d.body, d.n, d.check.start, d.strict = nil, 0, false, nil, 0, -1, false
	d.setGeneric(false)
	if br, ok := r.(bodyReader); ok {
		d.reuse = br.Len() <= maxPooledBody
		d.err = checkLengths(br, &d.check)
		d.body = br
	}
	// From a body in memory an unknown key fails msgpack's decoding, and
	// Decode then matches it ignoring case or drops it (refit); a stream
	// cannot be read again, so there msgpack skips it (case-sensitive).
	d.d.DisallowUnknownFields(d.body != nil)
	return d
}

// maxPooledBody is the largest body whose decoder goes back to the pool:
// msgpack's scratch buffer grows to the longest string read.
const maxPooledBody = 64 << 10

// decoders pools Decoders with their msgpack decoder, map decoder and
// scratch buffer: a new one per body cost 4 allocations (336 B) and ~400 ns
// (BenchmarkDecoder: released against unreleased; decoding a 100-byte string
// is then one allocation, the string).
var decoders = sync.Pool{New: func() any { return newDecoder() }}

func newDecoder() *Decoder {
	registerStringSlices()
	registerInts()
	d := &Decoder{d: vm.NewDecoder(nil)}
	d.d.SetCustomStructTag("json")
	// Not loose: msgpack's loose interface decoding reads binary as a
	// string, so a []byte inside a typed map[string]any, []any or any field
	// arrived as a string where an any parameter (decodeAny) kept it;
	// intsAsInt64 widens the integers and float32s loose decoding widened.
	d.mapDecoder = d.decodeMap // bound once: a method value allocates
	return d
}

// Encoder writes MessagePack values.
type Encoder struct {
	e        *vm.Encoder
	released bool
	named    reflect.Type      // the last type registerTypes saw
	walk     cyclecheck.Walker // refuses a cyclic value before msgpack recurses into it
}

// Encode writes v. A value msgpack cannot encode (a channel, a func) is an
// *spi.Error of status SERIALIZATION_ERROR naming its type; so is a value
// that reaches itself ("msgpack: encode *main.Node: encountered a cycle
// via *main.Node", encoding/json's words) or is nested deeper than
// MaxDepth maps and arrays, both refused before anything is written (see
// CheckCycles), and an Encode after Release.
func (e *Encoder) Encode(v any) error {
	if e.released {
		return spi.Errorf(spi.StatusSerializationError, "msgpack: encode %T: %w", v, errReleased)
	}
	if !cyclecheck.Flat(v) { // inlined: a string, a number, a []byte hold neither a cycle nor a named integer
		if err := e.walk.Walk(v, "json"); err != nil {
			return spi.Errorf(spi.StatusSerializationError, "msgpack: encode %T: %w", v, err)
		}
		registerTypes(v, &e.named) // before msgpack fixes the decoders of v's struct fields
	}
	if err := e.e.Encode(v); err != nil {
		return spi.Errorf(spi.StatusSerializationError, "msgpack: encode %T: %w", v, err)
	}
	return nil
}

// Release returns e to the pool, dropping its writer; e must not be used
// again (an Encode after Release fails). A second Release does nothing.
func (e *Encoder) Release() {
	if e.released {
		return
	}
	e.released = true
	e.e.ResetWriter(nil)
	encoders.Put(e)
}

// Decoder reads MessagePack values.
type Decoder struct {
	d          *vm.Decoder
	mapDecoder func(*vm.Decoder) (any, error) // d.decodeMap
	check      lengthCheck
	err        error        // sticky: checkLengths' verdict, the first failed Decode, or errReleased
	depth      int          // nesting of maps and arrays being read generically
	reuse      bool         // the body was small and in memory: Release pools the decoder
	body       bodyReader   // the body in memory (check.start is where it begins), nil for a stream
	n          int          // values decoded so far: the one a failed Decode was reading is the next
	strict     bool         // DisallowUnknownFields was called
	generic    bool         // GenericArguments was called
	named      reflect.Type // the last type registerTypes saw
}

var errReleased = errors.New("used after Release")

// Decode reads the next value into v, a non-nil pointer. With v a *any the
// value is generic (see the package doc), and so is any value landing in
// an interface inside v. A nil sets *v to its zero value (a nil slice, map
// or pointer), as encoding/json reads null, whatever *v held before. At
// the end of the input the error wraps io.EOF. A value of a kind v's type
// cannot hold (an integer for a *string, an array of any length for a
// struct not declared as_array), read from a body in memory, is a
// *TypeError describing it. Map keys match struct fields ignoring case (as
// encoding/json; from a body in memory, else exactly); one naming no field
// is ignored, or after DisallowUnknownFields an error. Errors are sticky:
// after a failed Decode the stream may be out of step with its values, so
// every later Decode fails the same way. Values decoded are the caller's:
// none shares memory with the decoder.
func (d *Decoder) Decode(v any) error {
	if d.err != nil {
		return fmt.Errorf("msgpack: decode into %T: %w", v, d.err)
	}
	var err error
	if p, ok := v.(*any); ok && !d.intoPointer(*p) {
		d.depth = 0
		*p, err = d.decodeAny()
	} else if ok {
		return d.Decode(*p)
	} else if nilled, nerr := d.nilInto(v); nilled {
		err = nerr
	} else if isScalar, ierr := d.decodeScalarPtr(v); isScalar {
		if _, ok := ierr.(*RangeError); !ok && ierr != nil { // a float, a string: say what was sent
			d.err = ierr
			return d.typeError(v, ierr)
		}
		err = ierr
	} else if d.arrayForStruct(v) {
		d.err = errArrayForStruct
		return d.typeError(v, errArrayForStruct)
	} else if err = d.decodeTyped(v); err != nil {
		if !strings.HasPrefix(err.Error(), "msgpack: unknown field ") {
			d.err = err
			return d.typeError(v, err)
		}
		err = d.refit(v, err)
	}
	if err == nil {
		switch v.(type) {
		case *any, *string, *int, *int64, *float64, *bool, *[]byte: // no interface inside (the kernel's common arguments)
		default:
			err = generic.FixInterfaces(reflect.ValueOf(v).Elem(), opaque, intsAsInt64)
		}
	}
	if err != nil {
		d.err = err
		switch err.(type) {
		case *TypeError, *PathError: // refit's: they name the target already
			return err
		}
		return fmt.Errorf("msgpack: decode into %T: %w", v, err)
	}
	d.n++
	return nil
}

// intoPointer reports whether a Decode into a *any holding x goes into x:
// x is a non-nil pointer and the next value is not a nil (encoding/json's
// rule; a nil sets the interface to nil).
func (d *Decoder) intoPointer(x any) bool {
	if x == nil {
		return false
	}
	if p := reflect.ValueOf(x); p.Kind() != reflect.Pointer || p.IsNil() {
		return false
	}
	c, err := d.d.PeekCode()
	return err == nil && c != msgpcode.Nil
}

// errArrayForStruct is Decode's error, wrapped in a *TypeError, for an
// array read into a struct that msgpack would fill from it (arrayForStruct).
var errArrayForStruct = errors.New("an array for a struct, want a map (an object) with its fields")

// arrayForStruct reports whether the next value is an array and v points
// (through any number of pointers) to a struct that does not decode itself
// (opaque) and is not declared array-encoded (msgpack's as_array tag on
// its _msgpack field). msgpack reads an empty array into such a struct as
// its zero value and an array of one element per field as the fields in
// order, where a map (an object) is what anyone sends for it and json
// refuses both: a generic caller's [] (Reference.Invoke(ctx, "Place",
// []any{})) would run the method with a zero struct. Decode refuses it
// whatever its length, as msgpack refused one of another length: "got an
// array ([]), want a map (an object) with svc.OrderReq's fields". Only
// the value decoded into v is checked; a struct inside it (a field, an
// element) is msgpack's to read.
func (d *Decoder) arrayForStruct(v any) bool {
	// the code first: an array is rare where a struct is read, so the
	// reflection below (asArray looks the field up by name) is not paid
	// on every Decode
	c, err := d.d.PeekCode()
	if err != nil || !(msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32) {
		return false
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !opaque(t) && !asArray(t)
}

// asArray reports whether struct type t declares itself array-encoded, as
// msgpack reads it: `msgpack:",as_array"` (or asArray) on a field named
// _msgpack. A Go peer writes such a struct as an array, one element per
// field.
func asArray(t reflect.Type) bool {
	f, ok := t.FieldByName("_msgpack")
	if !ok {
		return false
	}
	tag := f.Tag.Get("msgpack")
	if tag == "" {
		tag = f.Tag.Get("json")
	}
	_, opts, _ := strings.Cut(tag, ",")
	for o := range strings.SplitSeq(opts, ",") {
		if o == "as_array" || o == "asArray" {
			return true
		}
	}
	return false
}

// decodeTyped has msgpack decode into v, a typed target, after placing
// slots in the interfaces inside it that hold values (reuse.go), and puts
// their values back after, whatever happened. A panic inside msgpack (a
// target it cannot take) is returned as an error, not left to the caller.
func (d *Decoder) decodeTyped(v any) (err error) {
	var placed []reflect.Value
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		registerTypes(v, &d.named)
		placeSlots(rv.Elem(), &placed)
		if placed != nil {
			registerSlots()
			defer restoreSlots(rv.Elem(), placed)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{r} // explain describes the value instead
		}
	}()
	return d.d.Decode(v)
}

// The provider's kernel calls DisallowUnknownFields (spi.StrictDecoder).
var _ spi.StrictDecoder = (*Decoder)(nil)

// DisallowUnknownFields makes every later Decode fail for a map key that
// names no struct field of the target, even ignoring case (msgpack's and
// encoding/json's option of that name); the provider calls it before
// decoding a call's arguments. From a stream, keys match case-sensitively
// and the error is msgpack's. From a body in memory Dubbo's "class" type
// hint with a string value is dropped (generic.CheckFields), and the error is a
// *generic.FieldError (spi.TypeMismatch) naming the key, the struct, its
// fields and the nearest one: `unknown field "z" in Point (fields: X, Y);
// did you mean "Y"?`.
func (d *Decoder) DisallowUnknownFields() {
	d.strict = true
	d.d.DisallowUnknownFields(true)
}

// The provider's kernel calls GenericArguments for a generic call
// (spi.GenericDecoder).
var _ spi.GenericDecoder = (*Decoder)(nil)

// GenericArguments makes every later Decode read a string into a []byte
// (or a named byte slice), at any depth, as standard base64, as
// encoding/json reads the JSON a generic caller (`airnode call`, Invoke
// with maps) sends; one that is not base64 is then an error saying "want
// base64". Without it such a string is its own bytes: a Go consumer's
// string "cafe" for a []byte parameter arrives as the 4 bytes of "cafe".
// Binary is read as itself either way.
func (d *Decoder) GenericArguments() { d.setGeneric(true) }

// genericDecoders holds the msgpack decoders of the Decoders for which
// GenericArguments was called (*vm.Decoder → struct{}): decodeBytes, a
// decoder registered process-wide, sees only msgpack's decoder. It is
// looked up only for a string read into a byte slice.
var genericDecoders sync.Map

// setGeneric records whether d reads strings into byte slices as base64.
func (d *Decoder) setGeneric(on bool) {
	if on == d.generic {
		return
	}
	d.generic = on
	if on {
		genericDecoders.Store(d.d, struct{}{})
	} else {
		genericDecoders.Delete(d.d)
	}
}

// msgpackNames names struct fields as msgpack does here: the msgpack tag,
// else the json tag, else the Go name.
var msgpackNames = generic.Names{"msgpack", "json"}

// refit decodes v again after msgpack refused one of its map keys (err,
// "unknown field"): it reads the value again generically from the body in
// memory, renames the keys that match a field ignoring case and drops the
// others (or, when strict, returns a *generic.FieldError for the first),
// and decodes the result into v. A body not in memory keeps err. The
// generic read leaves the stream after the value, in step. Only a value
// whose keys do not match pays for this.
func (d *Decoder) refit(v any, err error) error {
	t := reflect.TypeOf(v)
	if d.body == nil || d.check.start < 0 || t == nil || t.Kind() != reflect.Pointer || reflect.ValueOf(v).IsNil() {
		return err
	}
	if _, serr := d.body.Seek(d.check.start, io.SeekStart); serr != nil {
		return err
	}
	d.d.ResetReader(d.body)
	d.d.SetMapDecoder(d.mapDecoder)
	for range d.n {
		if d.d.Skip() != nil {
			return err
		}
	}
	d.depth = 0
	x, gerr := d.decodeAny()
	if gerr != nil {
		return err
	}
	changed, fe := msgpackNames.CheckFields(x, t.Elem(), opaque, !d.strict)
	if fe != nil {
		return fe
	}
	if !changed { // the key is one CheckFields takes (an inlining it does not know)
		return err
	}
	b, merr := vm.Marshal(x)
	if merr != nil {
		return err
	}
	again := Codec{}.NewDecoder(bytes.NewReader(b)).(*Decoder) // its own map decoder reads its own bytes
	defer again.Release()
	again.setGeneric(d.generic)
	if again.err != nil {
		return err
	}
	// Not zeroed first: the keys are the ones the first attempt read, so a
	// field it set is set again, and one absent keeps its value (json).
	if err := again.decodeTyped(v); err != nil {
		return again.explain(v, err)
	}
	return nil
}

// opaque reports whether t decodes itself, so that what is inside it is
// not the codec's: msgpack calls its DecodeMsgpack, UnmarshalMsgpack,
// UnmarshalBinary or UnmarshalText.
func opaque(t reflect.Type) bool {
	if t == typeOfTime {
		return true
	}
	for _, it := range []reflect.Type{t, reflect.PointerTo(t)} {
		if it.Implements(typeOfCustomDecoder) || it.Implements(typeOfUnmarshaler) ||
			it.Implements(typeOfBinaryUnmarshaler) || it.Implements(typeOfTextUnmarshaler) {
			return true
		}
	}
	return false
}

// intsAsInt64 returns x, a generic value msgpack put in an interface
// inside a typed target, as decodeAny gives one: integers int64 (uint64
// only above MaxInt64; msgpack writes every non-negative integer as
// unsigned, so its own generic decoding gives uint8 for 200), floats
// float64, binary []byte, in the []any it made too (maps come from
// decodeMap, already so).
func intsAsInt64(x any) (any, error) {
	switch x := x.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), nil
		}
	case float32:
		return float64(x), nil
	case []any:
		for i, e := range x {
			x[i], _ = intsAsInt64(e)
		}
	case map[string]any: // from decodeMap: already int64
	}
	return x, nil
}

// Release drops d's reader and returns d to the pool (when its body was
// small and in memory); d must not be used again (a Decode after Release
// fails). The values it decoded stay valid. A second Release does nothing.
func (d *Decoder) Release() {
	if d.err == errReleased {
		return
	}
	d.err, d.body = errReleased, nil
	d.setGeneric(false)
	d.d.ResetReader(nil)
	if d.reuse {
		decoders.Put(d)
	}
}

var errTooDeep = errors.New("nesting deeper than " + strconv.Itoa(MaxDepth))

// decodeAny reads one generic value: maps and arrays here, with a bound on
// nesting, binary as []byte, and scalars through msgpack's loose decoding
// (float64, string, bool, nil, time.Time), integers as int64, uint64 only
// above MaxInt64.
func (d *Decoder) decodeAny() (any, error) {
	c, err := d.d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return d.decodeMap(d.d)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		return d.decodeArray()
	case msgpcode.IsBin(c):
		return d.d.DecodeBytes()
	case c >= msgpcode.Uint8 && c <= msgpcode.Uint64: // how msgpack writes any integer above 127
		u, err := d.d.DecodeUint64()
		if err != nil || u > math.MaxInt64 {
			return u, err
		}
		return int64(u), nil
	}
	return d.d.DecodeInterfaceLoose()
}

// decodeMap reads a map as map[string]any; it is also msgpack's map decoder
// for values inside typed targets.
func (d *Decoder) decodeMap(*vm.Decoder) (any, error) {
	n, err := d.d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err // n == -1: a nil map
	}
	if d.depth++; d.depth > MaxDepth {
		return nil, errTooDeep
	}
	defer func() { d.depth-- }()
	m := make(map[string]any, min(n, 1024)) // n comes from the wire
	for range n {
		k, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		v, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		m[keyString(k)] = v
	}
	return m, nil
}

func (d *Decoder) decodeArray() (any, error) {
	n, err := d.d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	if d.depth++; d.depth > MaxDepth {
		return nil, errTooDeep
	}
	defer func() { d.depth-- }()
	a := make([]any, 0, min(n, 1024))
	for range n {
		v, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	return a, nil
}

// keyString turns a map key into a string: strings as they are, []byte as
// text, anything else as fmt prints it (encoding/json prints int keys so).
func keyString(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	default:
		return fmt.Sprint(k)
	}
}

var (
	_ spi.Codec    = Codec{}
	_ spi.Encoder  = (*Encoder)(nil)
	_ spi.Decoder  = (*Decoder)(nil)
	_ spi.Releaser = (*Encoder)(nil)
	_ spi.Releaser = (*Decoder)(nil)
)

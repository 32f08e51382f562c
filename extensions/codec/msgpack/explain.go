package msgpack

import (
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/airnode/airnode/internal/gotype"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/extensions/codec/internal/generic"
	"github.com/airnode/airnode/spi"
)

// When msgpack fails inside a value (a struct field, an element) its error
// names an opcode ("invalid code=a1 decoding int64") or, for a target it
// cannot fill at all (an interface with methods), a reflect panic; neither
// says which field nor what was sent. explain, run only after a failure,
// reads the value again generically and walks it against the target's
// type to the first place where this package's decoders refuse it, and
// says so in a user's terms: a *TypeError when that place is the value
// itself, a *PathError naming the field path otherwise
// (`Order.items[0].qty: cannot decode into int64: got a string ("3")`).
// A good call never runs it.

// PathError is a Decode error for a value inside the target that its type
// there cannot hold: a string for an int64 field, a string that is not
// base64 for a []byte element, an integer out of range, a value for an
// interface with methods. Error() is `msgpack: decode into *main.Order:
// Order.items[0].qty: cannot decode into int64: got a string ("3")`; Got()
// (spi.TypeMismatch) is `a map with Order.items[0].qty: cannot decode into
// int64: got a string ("3")`, so that the provider's BAD_REQUEST reads
// "argument 0: cannot decode into main.Order: got a map with
// Order.items[0].qty: ...". Unwrap returns msgpack's error (or this
// package's decoders').
type PathError struct {
	// Target is the type decoded into, as %T prints it ("*main.Order").
	Target string
	// Outer is the kind of the whole value sent, with its article ("a map").
	Outer string
	// Path is where the value is: the target's type name ("Order", "" when
	// unnamed), then its fields as the codec names them (".items"),
	// elements ("[0]") and map keys (`["k"]`).
	Path string
	// Type is the type at Path ("int64").
	Type string
	// Kind and Value are the value at Path, as in TypeError ("a string",
	// `"3"`).
	Kind, Value string
	// Why says why a value of a kind Type takes does not fit ("want base64
	// (illegal base64 data at input byte 3)", "out of range 0..255"); ""
	// when the kind is the mismatch.
	Why string
	// Err is the decoder's error.
	Err error

	rng *RangeError  // the integer out of range at Path, if that is why
	at  string       // Path without the root's name and its dot ("items[0].qty")
	t   reflect.Type // the type at Path
}

// Inner returns `<path>: cannot decode into <type>: got <kind> (<value>)`
// and the reason, if any.
func (e *PathError) Inner() string {
	return e.Path + ": cannot decode into " + e.Type + ": got " + got(e.Kind, e.Value, e.Why)
}

// Error returns "msgpack: decode into <target>: " and Inner; for an
// integer out of range, "msgpack: decode into <target>: <path>: " and the
// *RangeError's text ("integer 1000 out of range for int8 (-128..127)"),
// as for one at the top of a Decode.
func (e *PathError) Error() string {
	if e.rng != nil {
		return "msgpack: decode into " + e.Target + ": " + e.Path + ": " + e.rng.Error()
	}
	return "msgpack: decode into " + e.Target + ": " + e.Inner()
}

// Got returns "<outer> with " and Inner (spi.TypeMismatch).
func (e *PathError) Got() string { return e.Outer + " with " + e.Inner() }

// Unwrap returns the decoder's error.
func (e *PathError) Unwrap() error { return e.Err }

// Mismatch returns where, what the type there wants and what was sent
// (spi.Mismatched): {Path: "items[0].qty", Want: "an integer", Kind: "a
// string", Value: `"3"`}.
func (e *PathError) Mismatch() spi.Mismatch {
	return mismatchOf(e.at, e.t, e.Kind, e.Value, e.Why, e.rng)
}

// mismatchOf returns the spi.Mismatch for a value of kind and value at
// path (inside the value decoded, "" for itself) that t refuses, for why
// (explain's reason, "" when the kind is the mismatch) or, when rng is
// not nil, for its range: a reason that says what is wanted ("want
// base64 (...)") or a range ("an integer in 0..255") is the Want, any
// other stays the Why; else Want is gotype.Want's.
func mismatchOf(path string, t reflect.Type, kind, value, why string, rng *RangeError) spi.Mismatch {
	m := spi.Mismatch{Path: path, Want: gotype.Want(t), Kind: kind, Value: value, Why: why}
	switch w, ok := strings.CutPrefix(why, "want "); {
	case rng != nil:
		m.Want, m.Why = "an integer in "+rng.Min+".."+rng.Max, ""
		if rng.Float {
			m.Want = "a number in " + rng.Min + ".." + rng.Max
		}
	case ok && strings.HasPrefix(w, "a map (an object) with"): // the struct's own words
		m.Why = ""
	case ok:
		m.Want, m.Why = w, ""
	}
	return m
}

// got renders a value and the reason it does not fit.
func got(kind, value, why string) string {
	s := kind
	if value != "" {
		s += " (" + value + ")"
	}
	if why != "" {
		s += ", " + why
	}
	return s
}

// panicError is a panic inside msgpack, recovered by decodeTyped. Its text
// (a reflect message) is kept as a cause, never shown: explain describes
// the value instead.
type panicError struct{ r any }

func (e *panicError) Error() string { return fmt.Sprintf("msgpack panicked: %v", e.r) }

// explain returns the error for err, msgpack's failure to decode value
// number d.n of the body into target: a *TypeError when the value itself
// is the mismatch (its kind, or a reason found by the walk), a *PathError
// when something inside it is, else err wrapped with the target (a panic
// as "cannot decode it into T", not its reflect text). It reads the value
// again from the body, so it only runs on failure, and only for a body in
// memory (a stream keeps msgpack's error).
func (d *Decoder) explain(target any, err error) error {
	if te := d.mismatch(target, err); te != nil {
		return te
	}
	t := reflect.TypeOf(target)
	var pe *panicError
	panicked := errors.As(err, &pe)
	x, ok := d.reread(t)
	if !ok {
		if panicked { // a stream: the value cannot be read again to say more
			return fmt.Errorf("msgpack: decode into %T: the value sent does not fit this type", target)
		}
		return fmt.Errorf("msgpack: decode into %T: %w", target, err)
	}
	root := rootName(t.Elem())
	if f := find(x, t.Elem(), root, 0); f != nil {
		kind, value := generic.Describe(f.x)
		if f.path == root { // the value itself
			return &TypeError{Target: fmt.Sprintf("%T", target), Kind: kind, Value: value, Why: f.why, Err: err, t: f.t}
		}
		outer, _ := generic.Describe(x)
		return &PathError{Target: fmt.Sprintf("%T", target), Outer: outer, Path: f.path, Type: gotype.String(f.t),
			Kind: kind, Value: value, Why: f.why, Err: err, rng: f.rng,
			at: strings.TrimPrefix(f.path[len(root):], "."), t: f.t}
	}
	if panicked {
		kind, value := generic.Describe(x)
		return &TypeError{Target: fmt.Sprintf("%T", target), Kind: kind, Value: value,
			Why: "which msgpack cannot decode into " + gotype.String(t.Elem()), Err: err, t: t.Elem()}
	}
	return fmt.Errorf("msgpack: decode into %T: %w", target, err)
}

// reread reads value number d.n of the body again, generically; false
// when the body is not in memory or cannot be read again.
func (d *Decoder) reread(t reflect.Type) (any, bool) {
	if d.body == nil || d.check.start < 0 || t == nil || t.Kind() != reflect.Pointer {
		return nil, false
	}
	if !d.rewind() {
		return nil, false
	}
	d.depth = 0
	x, err := d.decodeAny()
	return x, err == nil
}

// rewind sets the decoder at value number d.n of the body in memory.
func (d *Decoder) rewind() bool {
	if _, err := d.body.Seek(d.check.start, io.SeekStart); err != nil {
		return false
	}
	d.d.ResetReader(d.body)
	d.d.SetMapDecoder(d.mapDecoder)
	for range d.n {
		if d.d.Skip() != nil {
			return false
		}
	}
	return true
}

// rootName is how a path starts: t's name without its package ("Order"),
// or "" for an unnamed type (a path then starts at "[0]" or `["k"]`).
func rootName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	return t.Name()
}

// finding is the first place inside a generic value that its type there
// does not take.
type finding struct {
	path string
	t    reflect.Type
	x    any
	why  string
	rng  *RangeError // the integer out of range, if that is why
}

// find walks x, a generic value (decodeAny's), against t, the type it is
// decoded into, and returns the first place where this package's decoders
// refuse it, in the order of struct keys sorted: a kind t does not take, a
// string that is not base64 for a []byte or RFC 3339 for a time.Time, an
// integer out of range, an array longer than a Go array, a map key that
// is not decimal for integer keys, any value for an interface with methods,
// and a protobuf message that fails inside. Types that decode themselves
// (opaque) are not looked into; a nil fits everything. nil when x fits.
func find(x any, t reflect.Type, path string, depth int) *finding {
	if x == nil || depth > MaxDepth {
		return nil
	}
	if protoMessage(t) {
		if f := findIn(x, t, path, depth); f != nil {
			return &finding{path: path, t: t, x: x,
				why: "a protobuf message, whose fields msgpack cannot fill (oneofs are interfaces with methods): call it with codec=protobuf"}
		}
		return nil
	}
	return findIn(x, t, path, depth)
}

func findIn(x any, t reflect.Type, path string, depth int) *finding {
	here := &finding{path: path, t: t, x: x}
	if t == typeOfTime {
		switch s := x.(type) {
		case time.Time:
			return nil
		case string:
			var tm time.Time
			if err := tm.UnmarshalText([]byte(s)); err != nil {
				here.why = "want an RFC 3339 time (" + err.Error() + ")"
				return here
			}
			return nil
		}
		here.why = "want an RFC 3339 time or a timestamp"
		return here
	}
	if t.Kind() != reflect.Interface && opaque(t) {
		return nil // it decodes itself: what it takes is its own
	}
	switch t.Kind() {
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return nil
		}
		here.why = gotype.String(t) + " is an interface with methods, which no decoded value has (declare a concrete type, or any)"
		return here
	case reflect.Pointer:
		return find(x, t.Elem(), path, depth+1)
	case reflect.Bool:
		if _, ok := x.(bool); ok {
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if r := intFits(x, t); r != nil {
			here.why, here.rng = "out of range "+r.Min+".."+r.Max, r
			return here
		}
		if _, ok := x.(int64); ok {
			return nil
		}
		if _, ok := x.(uint64); ok {
			return nil
		}
	case reflect.Float32, reflect.Float64:
		switch f := x.(type) {
		case int64, uint64:
			return nil
		case float64:
			if t.Kind() == reflect.Float32 && math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
				here.why = "out of range for float32"
				return here
			}
			return nil
		}
	case reflect.String:
		switch x.(type) {
		case string, []byte:
			return nil
		}
	case reflect.Slice, reflect.Array:
		switch s := x.(type) {
		case []byte:
			if t.Elem().Kind() == reflect.Uint8 {
				return nil
			}
		case string:
			if t.Elem().Kind() != reflect.Uint8 {
				break
			}
			if t.Kind() == reflect.Slice {
				if _, err := decodeBase64(s); err != nil {
					here.why = "want base64 (" + err.Error() + ")"
					return here
				}
			}
			return nil
		case []any:
			if t.Kind() == reflect.Array && len(s) > t.Len() {
				here.why = "longer than " + gotype.String(t) + " (" + strconv.Itoa(len(s)) + " elements)"
				return here
			}
			for i, e := range s {
				if f := find(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1); f != nil {
					return f
				}
			}
			return nil
		}
	case reflect.Map:
		m, ok := x.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if intKey(t) {
				if err := parseKey(k, reflect.New(t.Key()).Elem()); err != nil {
					here.why = err.Error()
					return here
				}
			}
			if f := find(m[k], t.Elem(), path+"["+strconv.Quote(k)+"]", depth+1); f != nil {
				return f
			}
		}
		return nil
	case reflect.Struct:
		switch m := x.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(m)) {
				name, ft, ok := msgpackNames.Field(t, k)
				if !ok {
					continue // unknown keys are refit's (DisallowUnknownFields)
				}
				if f := find(m[k], ft, path+"."+name, depth+1); f != nil {
					return f
				}
			}
			return nil
		case []any:
			// msgpack reads a struct written as an array (its as_array
			// form) only from one element per field, in order; it failed,
			// so say what was sent rather than msgpack's "number of fields
			// in array-encoded struct has changed".
			here.why = "want a map (an object) with " + gotype.String(t) + "'s fields"
			return here
		}
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		here.why = "which msgpack cannot decode into a " + t.Kind().String()
		return here
	}
	return here
}

// intFits returns the *RangeError for x, an integer read generically, into
// t, an integer type; nil when it fits or x is no integer.
func intFits(x any, t reflect.Type) *RangeError {
	unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr
	switch n := x.(type) {
	case int64:
		if unsigned && n < 0 {
			return rangeError(t, strconv.FormatInt(n, 10))
		}
		if !unsigned {
			if _, err := checkInt(n, t); err != nil {
				return err.(*RangeError)
			}
		} else if bits := t.Bits(); bits < 64 && uint64(n)>>bits != 0 {
			return rangeError(t, strconv.FormatInt(n, 10))
		}
	case uint64: // above MaxInt64
		if !unsigned {
			return rangeError(t, strconv.FormatUint(n, 10))
		}
		if bits := t.Bits(); bits < 64 && n>>bits != 0 {
			return rangeError(t, strconv.FormatUint(n, 10))
		}
	}
	return nil
}

// decodeBase64 decodes s as readBase64 does.
func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// protoMessage reports whether t is a protobuf message struct (*t has
// ProtoReflect, protoimpl's method), which msgpack cannot fill through
// reflection: its oneofs are interfaces with methods, its state
// unexported. Told by the method's name, so that this package does not
// depend on protobuf.
func protoMessage(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	_, ok := reflect.PointerTo(t).MethodByName("ProtoReflect")
	return ok
}

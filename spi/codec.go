package spi

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Codec is the "codec" extension point (URL key "codec", default
// "msgpack"): it serializes request and response bodies. Each codec has a
// wire id (the low 5 bits of the frame flags) so a provider answers every
// consumer in the consumer's own codec.
//
// A body is a sequence of values written by one Encoder and read back in the
// same order by one Decoder; the exchange decides the sequence. Codecs are
// stateless and safe for concurrent use; encoders and decoders are not.
type Codec interface {
	// Name is the extension name ("msgpack", "json", "protobuf").
	Name() string
	// ID is the wire id, 1-31, unique among codecs (0 is reserved for
	// event frames with no body).
	ID() uint8
	// NewEncoder returns an encoder writing to w.
	NewEncoder(w io.Writer) Encoder
	// NewDecoder returns a decoder reading from r.
	NewDecoder(r io.Reader) Decoder
}

// Encoder writes values one after another. An error is a
// SERIALIZATION_ERROR for the call; the kernel sends nothing.
type Encoder interface {
	Encode(v any) error
}

// Decoder reads values in the order they were encoded. Decode(v) with v a
// pointer fills it; with a *any it stores a generic value. An error on the
// provider answers BAD_REQUEST; on the consumer it fails the call with
// BAD_RESPONSE.
type Decoder interface {
	Decode(v any) error
}

// Releaser is an optional interface of an Encoder or a Decoder whose codec
// reuses them (a sync.Pool behind NewEncoder/NewDecoder). The exchange
// calls Release once it is done with one — after the last Encode of a
// body, after the last Decode of a body — and never uses it again; the
// values decoded stay valid (a decoder copies what it returns).
type Releaser interface {
	Release()
}

// Release calls v's Release when v is a Releaser; other values are left
// alone.
func Release(v any) {
	if r, ok := v.(Releaser); ok {
		r.Release()
	}
}

// Reserver is an optional interface of the writer a codec's encoder
// writes to (Codec.NewEncoder's w) when that writer takes a bounded number
// of bytes: the exchange's request body, bounded by the consumer's payload
// limit. An encoder that knows how many bytes a value takes before it
// encodes it (protobuf: proto.Size; a []byte's length) calls Reserve(n),
// n the bytes it is about to write, first: an error means they would not
// fit, and Encode returns it (wrapped) without encoding the value, so
// that a body far over the limit fails in microseconds, not after being
// encoded whole. Such a writer also fails a Write that would cross the
// limit, with the same error, which stops an encoder that writes as it
// goes; one that encodes into a buffer of its own first may skip
// Reserve, at the cost of encoding the value.
type Reserver interface {
	Reserve(n int) error
}

// TypeMismatch is an optional interface of a Decode error: the value read
// is of a kind the target's type cannot hold (an integer for a *string).
// Got describes the value in a user's terms, "an integer (123)" or
// "a string (\"x\")": the provider's BAD_REQUEST for an argument then reads
// "argument 0 (string): got an integer (123)" (ArgumentError; with "want
// ..." when the error is also Mismatched), with the codec's error as its
// cause. Codecs that cannot tell need not offer it.
type TypeMismatch interface {
	error
	Got() string
}

// unknownFieldGot starts what the bundled codecs' TypeMismatch says was
// sent for a map key naming no field of a struct: "a map with unknown
// field "Phone" in UserV2 (fields: ID, Name, Email, Age)", or for several
// keys of one map "a map with unknown fields "Email", "Phone" in ...".
const (
	unknownFieldGot  = "a map with unknown field "
	unknownFieldsGot = "a map with unknown fields "
)

// UnknownField returns, when err refuses a map key naming no field of a
// struct (a codec decoding with DisallowUnknownFields), the codec's words
// for it: `unknown field "Phone" in UserV2 (fields: ID, Name, Email,
// Age)` (`unknown fields "Email", "Phone" in ...` for several keys of one
// map), with where in the value (" at .Addr") when nested; "" for any
// other error, two keys naming one field ("X" and "x") included. Every
// TypeMismatch in err's tree (Unwrap, errors.Join) is looked at, not only
// the first: a codec may wrap the field error in one of its own that says
// where it is. The kernel and the sdk use it to let a provider ignore a
// field that a newer consumer added.
func UnknownField(err error) string {
	if tm, ok := err.(TypeMismatch); ok {
		if got := tm.Got(); strings.HasPrefix(got, unknownFieldGot) || strings.HasPrefix(got, unknownFieldsGot) {
			return strings.TrimPrefix(got, "a map with ")
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return UnknownField(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range u.Unwrap() {
			if f := UnknownField(next); f != "" {
				return f
			}
		}
	}
	return ""
}

// Mismatch says, in a user's terms, where inside one decoded value a part
// of it did not fit its type, what that type wants there and what was
// sent. A codec's Decode error offers it through Mismatched; ArgumentError
// builds the provider's BAD_REQUEST from it.
type Mismatch struct {
	// Path is where inside the value: "" for the value itself, else its
	// fields as the codec names them, elements and map keys, with no
	// leading dot: "Item", "Items[1].Qty", `Meta["a"]`, "[0]".
	Path string
	// Want is what the type at Path takes, with its article: "an integer",
	// "an array of main.Item", "an object with main.Item's fields".
	Want string
	// Kind is what was sent, with its article: "a map", "a string".
	Kind string
	// Value is a short rendering of what was sent (`{"SKU":"x"}`, `"3"`);
	// "" when it could not be read.
	Value string
	// Why says why a value of a kind Want takes still does not fit ("key
	// \"x\" is not a decimal int"); "" when the kind is the mismatch.
	Why string
}

// String returns "[at <Path>: ]want <Want>, got <Kind> (<Value>)[, <Why>]".
func (m Mismatch) String() string {
	s := m.want()
	if m.Path != "" {
		s = "at " + m.Path + ": " + s
	}
	return s
}

// want returns "want <Want>, got <Kind> (<Value>)[, <Why>]".
func (m Mismatch) want() string {
	s := "want " + m.Want + ", got " + m.Kind
	if m.Value != "" {
		s += " (" + m.Value + ")"
	}
	if m.Why != "" {
		s += ", " + m.Why
	}
	return s
}

// Mismatched is an optional interface of a Decode error (next to
// TypeMismatch) whose codec can say where the value did not fit and what
// its type wanted there. The bundled msgpack and json codecs offer it for
// a body in memory; it is built only on failure.
type Mismatched interface {
	error
	Mismatch() Mismatch
}

// ArgumentError returns the BAD_REQUEST for argument i of service.method
// that the codec could not decode (err, kept as the cause) into the
// parameter type param ("" for a generic argument), one text for the
// kernel and the plugin SDK:
//
//   - err is Mismatched: "acme.Shop.Place argument 0 (main.Order), at
//     Items: want an array of main.Item, got a map ({"SKU":"x"})", or
//     "... argument 0 (string): want a string, got an integer (123)" for
//     the value itself;
//   - err is a TypeMismatch only: "... argument 0 (main.Point): got a map
//     with unknown field ...";
//   - otherwise the codec's text: "... argument 0 (int): <err>".
func ArgumentError(service, method string, i int, param string, err error) *Error {
	var b strings.Builder
	b.WriteString(service + "." + method + " argument " + strconv.Itoa(i))
	if param != "" {
		b.WriteString(" (" + param + ")")
	}
	var mm Mismatched
	var tm TypeMismatch
	switch {
	case errors.As(err, &mm):
		m := mm.Mismatch()
		if m.Path != "" {
			b.WriteString(", at " + m.Path)
		}
		b.WriteString(": " + m.want())
	case errors.As(err, &tm):
		b.WriteString(": got " + tm.Got())
	default:
		b.WriteString(": " + err.Error())
	}
	return &Error{Status: StatusBadRequest, Message: b.String(), Cause: err}
}

// ArgumentCountError returns the BAD_REQUEST for a call of service.method,
// which takes want arguments, with got: "acme.Shop.Two takes 2 arguments,
// got 1". When the one argument sent, first (as a generic value: []any
// for an array; nil when not read), is an array of exactly want elements,
// the caller most likely wrapped the arguments in one array, and the text
// says how to pass them: "...; got 1, an array of 2 elements: pass each
// argument separately (airnode call ... Two '{"SKU":"a"}' 1)". types,
// when given, are the parameter types' names, said after the count:
// "shop.Shop.Place takes 1 argument (main.Order), got 0". Built only on
// that failure.
func ArgumentCountError(service, method string, want, got int, first any, types ...string) *Error {
	msg := service + "." + method + " takes " + strconv.Itoa(want) + " argument"
	if want != 1 {
		msg += "s"
	}
	if len(types) > 0 {
		msg += " (" + strings.Join(types, ", ") + ")"
	}
	msg += ", got " + strconv.Itoa(got)
	if elems, ok := first.([]any); ok && got == 1 && want > 1 && len(elems) == want {
		msg += ", an array of " + strconv.Itoa(want) + " elements: pass each argument separately (airnode call ... " + method
		for _, e := range elems {
			b, err := json.Marshal(e)
			if err != nil {
				b = []byte("?")
			}
			msg += " " + shellWord(string(b))
		}
		msg += ")"
	}
	return &Error{Status: StatusBadRequest, Message: msg}
}

// shellWord returns s as one word of a POSIX shell command line: as it
// is when it holds only letters, digits and ".-+", else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

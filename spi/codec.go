package spi

import (
	"io"
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

// TypeMismatch is an optional interface of a Decode error: the value read
// is of a kind the target's type cannot hold (an integer for a *string).
// Got describes the value in a user's terms, "an integer (123)" or
// "a string (\"x\")": the provider's BAD_REQUEST for an argument then reads
// "argument 0: cannot decode into string: got an integer (123)", with the
// codec's error as its cause. Codecs that cannot tell need not offer it.
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

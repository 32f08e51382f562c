// Package msgpack is airnode's default codec, registered as "msgpack" with
// wire id 1: MessagePack (github.com/vmihailenco/msgpack/v5), compact and
// schemaless.
//
// Struct fields are named by their msgpack tag, else their json tag, else
// their Go name, so one struct reads the same through the json codec. Ints
// are written in their most compact form and read into any integer type
// that holds them; one that does not (300 into an int8, -1 into a uint16,
// 2^63 into an int64), at the top of a Decode or anywhere inside a typed
// target, is a *RangeError (spi.TypeMismatch, "got an integer (300), out
// of range -128..127") where msgpack itself truncated (see ints.go). A value read into *any is JSON-printable: maps become
// map[string]any (non-string keys are printed with fmt), arrays []any,
// integers int64 (uint64 above MaxInt64), floats float64, binary []byte
// (at any depth, in a typed map[string]any or []any too);
// nesting deeper than MaxDepth is an error. A value landing in an
// interface inside a typed target (a struct's any field) reads the same
// way. The integer rule
// is the json codec's too: msgpack writes every non-negative integer as
// unsigned (an int64 200 is a uint8 on the wire), so its own generic
// decoding gives uint64 for it; a Go user, like most RPC users, expects
// int64 for an integer that fits. Map keys match struct fields ignoring
// case, as encoding/json does (a CLI user's {"x":3} reaches field X); a key
// naming no field is ignored, except after Decoder.DisallowUnknownFields —
// which the provider calls for a call's arguments — where it is a
// *generic.FieldError naming the key, the struct, its fields and the
// nearest one. Only a value whose keys do not match as written pays for
// this: it is read again generically, its keys fixed, and decoded again. A
// body in memory (bytes.Reader, as the exchange passes it) is checked before decoding: a declared length beyond its end
// or nesting beyond MaxDepth fails the first Decode, so hostile bytes cost
// neither a huge allocation nor the stack. A value of a kind the target
// cannot hold (an integer for a *string) is a *TypeError saying what was
// sent, "got an integer (123)" (spi.TypeMismatch), wrapping msgpack's error;
// an array for a struct is one whatever its length ("got an array ([]),
// want a map (an object) with main.Order's fields"), as json refuses it,
// where msgpack read an empty one as the zero struct and one of one
// element per field as the fields in order (a struct declared as_array
// still reads its array);
// one inside the target (a struct field, an element) is a *PathError naming
// where, `Order.items[0].qty: cannot decode into int64: got a string ("3")`,
// found by reading the value again after the failure (explain.go). A target
// msgpack cannot fill (an interface with methods, a protobuf message) is
// one of these too ("fmt.Stringer is an interface with methods"), never
// msgpack's reflect panic.
// An interface inside a typed target that holds a value (a reply variable
// reused from an earlier call) is read as encoding/json reads it: into
// the value when it is a non-nil pointer, else replaced by the value read
// (a nil sets it to nil; an absent field keeps it), where msgpack itself
// decoded into any value in place and panicked on a map (see reuse.go).
// A nil read into a typed target sets it to its zero value, as the json
// codec reads null: a reply slice, map or pointer that held a value
// becomes nil, at any depth for []string too (msgpack's own []string
// decoding leaves its target as it was; this package replaces it once per
// process with vm.Register, see registerStringSlices). Encode refuses,
// with SERIALIZATION_ERROR and before writing anything, a value that
// reaches itself ("encountered a cycle via *main.Node", encoding/json's
// words: n.Next = n, a map[string]any holding itself) or nests deeper than
// MaxDepth maps and arrays, which msgpack recursed into until a fatal stack
// overflow; a field msgpack skips (json:"-") is not followed, and a type
// that encodes itself is not looked into (see cycles.go, CheckCycles).
//
// Generic callers. `airnode call` (Dubbo's generic invocation), a gateway
// or Reference.Invoke with maps send what JSON has, and a typed target
// reads it as encoding/json reads the same JSON, so that a command line
// means the same data under either codec (jsonforms.go): after
// Decoder.GenericArguments (the provider calls it for a call marked
// generic, spi.GenericDecoder) a string into a []byte (or a named byte
// slice) is standard base64 — one that is not is a *TypeError or
// *PathError, "want base64" — where a typed caller's string is its own
// bytes; an array of integers
// 0..255 is bytes too; a string into a time.Time or *time.Time, at any
// depth, is RFC 3339, its offset kept, and a nil is the zero time; a
// string key into a map with integer keys (map[int]V, map[uint8]V) is
// decimal. A Go consumer's typed values (binary, the timestamp extension,
// integer keys) are read as before. These decoders, like the integer
// checks, are registered in msgpack's process-wide table, so they serve
// other msgpack decoding in the process too.
//
// Where the codecs still differ. The timestamp msgpack writes for a
// time.Time carries an instant, not a time zone: a Go peer's 10:00 +01:00
// arrives as the same instant in time.Local (09:00 in a UTC process; Equal
// holds), where json keeps the offset it wrote; a string a generic caller
// sends keeps its offset under both.
// A Go array ([2]string) sent more elements than it holds is an error
// here ("longer than [2]string (3 elements)"), where encoding/json drops
// the extra ones silently; sent fewer, both leave the rest zero. A struct
// embedding another (Base) takes its fields inline under both codecs
// ({"ID":1}); msgpack also takes the embedded struct by its type's name
// ({"Base":{"ID":1}}), which json refuses as an unknown field. A generic
// provider (an spi.Invoker exported as is) receives a Go consumer's []byte
// and time.Time as []byte and time.Time under msgpack, and as the base64
// and RFC 3339 strings json wrote under json.
//
// A type encoded through encoding.TextMarshaler is written as a str, its
// text, as encoding/json writes it (text.go); msgpack itself wrote bin.
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package msgpack

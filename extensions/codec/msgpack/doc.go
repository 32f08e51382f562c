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
// integers int64 (uint64 above MaxInt64), floats float64, binary []byte;
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
// this: it is read again generically, its keys fixed, and decoded again. A body in memory (bytes.Reader, as the exchange
// passes it) is checked before decoding: a declared length beyond its end
// or nesting beyond MaxDepth fails the first Decode, so hostile bytes cost
// neither a huge allocation nor the stack. A value of a kind the target
// cannot hold (an integer for a *string) is a *TypeError saying what was
// sent, "got an integer (123)" (spi.TypeMismatch), wrapping msgpack's error.
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
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package msgpack

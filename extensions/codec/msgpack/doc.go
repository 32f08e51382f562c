// Package msgpack is airnode's default codec, registered as "msgpack" with
// wire id 1: MessagePack (github.com/vmihailenco/msgpack/v5), compact and
// schemaless.
//
// Struct fields are named by their msgpack tag, else their json tag, else
// their Go name, so one struct reads the same through the json codec. Ints
// are written in their most compact form and read into any integer type
// that holds them. A value read into *any is JSON-printable: maps become
// map[string]any (non-string keys are printed with fmt), arrays []any,
// integers int64 (uint64 above MaxInt64), binary []byte; nesting deeper than
// MaxDepth is an error. A body in memory (bytes.Reader, as the exchange
// passes it) is checked before decoding: a declared length beyond its end
// or nesting beyond MaxDepth fails the first Decode, so hostile bytes cost
// neither a huge allocation nor the stack. A value of a kind the target
// cannot hold (an integer for a *string) is a *TypeError saying what was
// sent, "got an integer (123)" (spi.TypeMismatch), wrapping msgpack's error.
// A nil read into a typed target sets it to its zero value, as the json
// codec reads null: a reply slice, map or pointer that held a value
// becomes nil, at any depth for []string too (msgpack's own []string
// decoding leaves its target as it was; this package replaces it once per
// process with vm.Register, see registerStringSlices).
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package msgpack

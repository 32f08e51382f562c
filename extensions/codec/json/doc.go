// Package json is the codec registered as "json" with wire id 2: each value
// is one JSON text (encoding/json) followed by a newline, so a body is
// readable with any JSON tool.
//
// Values read into *any, or into an interface inside a typed target, are
// generic: objects map[string]any, arrays []any, []byte as base64 strings,
// and numbers exact, the rule msgpack follows too: an integer is int64 when
// it fits, uint64 when it fits there (above MaxInt64), else float64, as is
// any number written with a fraction or an exponent (1.5, 1.0, 1e3); a
// number beyond float64 is an error. (encoding/json alone reads every
// number as float64, which turns 9007199254740993 into ...992.) Typed
// targets read numbers as encoding/json does. Object keys match struct
// fields ignoring case, as encoding/json does; a key naming no field is
// ignored, except after Decoder.DisallowUnknownFields — which the provider
// calls for a call's arguments — where it is an error naming the key, the
// struct and its fields. HTML characters are not escaped. A string holding
// bytes that are not UTF-8 is refused at Encode (SERIALIZATION_ERROR naming
// where and the byte offset), where encoding/json writes U+FFFD; a Go
// string sent for a []byte is read as base64, JSON's only bytes form. Nesting is
// bounded by encoding/json (10000).
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package json

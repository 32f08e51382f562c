// Package json is the codec registered as "json" with wire id 2: each value
// is one JSON text (encoding/json) followed by a newline, so a body is
// readable with any JSON tool.
//
// Values read into *any follow encoding/json: objects map[string]any,
// arrays []any, numbers float64 (integers beyond 2^53 lose precision; read
// them into a typed target instead), []byte as base64 strings. HTML
// characters are not escaped. Nesting is bounded by encoding/json (10000).
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package json

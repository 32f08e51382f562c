// Package protobuf is the codec registered as "protobuf" with wire id 3:
// arguments and results are protocol buffer messages
// (google.golang.org/protobuf), each carried as its full name and its binary
// wire encoding.
//
// The exchange's own header values — strings, integers, bools, nil and
// map[string]string attachments — and plain scalars ([]byte, floats) are
// carried too, each value prefixed by a kind byte (see Kind). Any other Go
// type (a struct that is no message, map[string]any, a slice) is refused at
// Encode with an *spi.Error of status SERIALIZATION_ERROR naming the type.
// A message read into *any is resolved by its full name in
// protoregistry.GlobalTypes, so its Go package must be linked in.
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package protobuf

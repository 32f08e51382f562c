// Package protobuf is the codec registered as "protobuf" with wire id 3:
// arguments and results are protocol buffer messages
// (google.golang.org/protobuf), each carried as its full name and its binary
// wire encoding.
//
// The exchange's own header values — strings, integers, bools, nil and
// map[string]string attachments — and plain scalars ([]byte, floats) are
// carried too, each value prefixed by a kind byte (see Kind). A scalar sent
// for a message is read by protojson (the proto3 JSON mapping: "bob" for a
// google.protobuf.StringValue, an RFC 3339 string for a Timestamp); a
// []byte or a map[string]string sent for a message is not converted but
// refused (the provider answers BAD_REQUEST naming the Go type sent and
// the message wanted, a reply fails BAD_RESPONSE); a
// string into a []byte as base64 in a call marked generic
// (Decoder.GenericArguments), else as its own bytes; a float beyond a
// float32 target's range is an error, not an infinity. A generic map[string]any
// or []any (what `airnode call` and Reference.Invoke send for a JSON object
// or array) is refused at Encode: its kind, KindJSON, is read by providers
// of this build on but not sent until providers declare it (older ones
// cannot read it); the URL key codec=json (airnode call: -p codec=json)
// carries it. Any other Go type (a struct
// that is no message, a typed slice or map) is refused at Encode with an
// *spi.Error of status SERIALIZATION_ERROR naming the type.
// A nil value, untyped or a typed nil message, is carried as KindNil:
// read into a message it resets it (the empty message, no error), into a
// pointer to a message pointer (a method's *pb.T parameter) it sets nil.
// A message read into *any is resolved by its full name in
// protoregistry.GlobalTypes, so its Go package must be linked in: the
// well-known types (wrapperspb, structpb, timestamppb, ...) always are.
//
// URL keys: none (the codec is chosen by the "codec" key).
//
// The Codec is safe for concurrent use; an Encoder or Decoder is used by one
// goroutine. Encoders and decoders are pooled: Release (spi.Releaser) hands
// one back after its body, and the values it decoded stay the caller's.
package protobuf

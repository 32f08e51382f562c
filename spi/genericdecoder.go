package spi

// GenericDecoder is an optional interface of a Decoder whose wire tells a
// string from binary data (msgpack's str and bin, protobuf's kinds), so
// that a string sent for a []byte can be read the two ways a caller may
// mean it.
//
// A typed call (a Go consumer's own values: Reference.Call, Invoke with
// typed values) that sends a Go string for a []byte parameter means the
// string's bytes, and such a decoder reads them so by default. A generic
// call (GenericInvocation: `airnode call`, Invoke with maps, any caller
// sending AttachmentGeneric) has what JSON has, which carries bytes as a
// base64 string (encoding/json's rule): after GenericArguments the decoder
// reads a string into a []byte, or a named byte slice, as standard base64,
// and one that is not base64 is an error saying so.
//
// Who calls it, and when: the provider's kernel (kernel/method.go) and the
// plugin SDK, once per call, before decoding a generic call's arguments;
// never for a typed call, and consumers never call it. A codec whose wire
// has no bytes type (json) has one reading, base64, and need not implement
// it. It affects every later Decode of this decoder only.
type GenericDecoder interface {
	Decoder
	GenericArguments()
}

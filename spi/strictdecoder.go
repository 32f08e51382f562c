package spi

// StrictDecoder is an optional interface of a Decoder (what
// Codec.NewDecoder returns) that can refuse a map key naming no field of
// the struct it decodes into, as encoding/json's Decoder does.
//
// Who checks it, and when: the provider's kernel (kernel/method.go), once
// per call, before decoding a call's arguments into the method's parameter
// types. When the decoder is a StrictDecoder it calls
// DisallowUnknownFields, then Decode; a refused key must come back as a
// Decode error that UnknownField recognises (a TypeMismatch whose Got
// starts with `a map with unknown field "Phone"`). The kernel uses the
// refusal only to notice the key: it decodes the call again with a new
// decoder, without the check, unless the call is generic or its body
// cannot be read again (a typo then
// answers BAD_REQUEST naming the field); so a provider still ignores a
// field a newer consumer added. A Decoder that is not a StrictDecoder
// decodes with its codec's own rule (the bundled ones ignore such keys)
// and a generic call's typo goes unnoticed. The bundled json and msgpack
// codecs' decoders are StrictDecoders; consumers never call it.
//
// DisallowUnknownFields affects every later Decode of this decoder only;
// it is called before the first Decode and at most once.
type StrictDecoder interface {
	Decoder
	DisallowUnknownFields()
}

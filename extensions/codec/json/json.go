package json

import "github.com/airnode/airnode/extensions/codec/internal/jsonwire"

// Name is the extension name of this codec.
const Name = jsonwire.Name

// ID is the codec's wire id in the frame flags.
const ID = jsonwire.ID

// Codec is the json codec. The zero value is ready to use. Its encoders
// write one JSON text and a newline per value; its decoders read numbers
// into generic values exactly (see the package doc). Both come from a pool
// and go back there on Release (spi.Releaser).
//
// The implementation lives in an internal package so that the protobuf
// codec, which reads a generic JSON argument as this codec does, shares it
// without importing another extension.
type Codec = jsonwire.Codec

// Encoder writes JSON texts (Codec.NewEncoder).
type Encoder = jsonwire.Encoder

// Decoder reads JSON texts (Codec.NewDecoder); it implements
// spi.StrictDecoder.
type Decoder = jsonwire.Decoder

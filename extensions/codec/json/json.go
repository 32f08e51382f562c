package json

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this codec.
const Name = "json"

// ID is the codec's wire id in the frame flags.
const ID uint8 = 2

// Codec is the json codec. The zero value is ready to use.
type Codec struct{}

// Name returns "json".
func (Codec) Name() string { return Name }

// ID returns 2.
func (Codec) ID() uint8 { return ID }

// NewEncoder returns an encoder writing one JSON text and a newline per value
// to w.
func (Codec) NewEncoder(w io.Writer) spi.Encoder {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return &Encoder{e: e}
}

// NewDecoder returns a decoder reading JSON texts from r. It buffers, so it
// may read beyond the values it returns.
func (Codec) NewDecoder(r io.Reader) spi.Decoder { return &Decoder{d: json.NewDecoder(r)} }

// Encoder writes JSON texts.
type Encoder struct{ e *json.Encoder }

// Encode writes v. A value encoding/json cannot encode (a channel, a func, a
// NaN, a cycle) is an *spi.Error of status SERIALIZATION_ERROR naming its
// type.
func (e *Encoder) Encode(v any) error {
	if err := e.e.Encode(v); err != nil {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, err)
	}
	return nil
}

// Decoder reads JSON texts.
type Decoder struct{ d *json.Decoder }

// Decode reads the next JSON text into v, a non-nil pointer. At the end of
// the input the error wraps io.EOF.
func (d *Decoder) Decode(v any) error {
	if err := d.d.Decode(v); err != nil {
		return fmt.Errorf("json: decode into %T: %w", v, err)
	}
	return nil
}

var (
	_ spi.Codec   = Codec{}
	_ spi.Encoder = (*Encoder)(nil)
	_ spi.Decoder = (*Decoder)(nil)
)

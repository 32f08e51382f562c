package json

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

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
//
// The encoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewEncoder(w io.Writer) spi.Encoder {
	e := encoders.Get().(*Encoder)
	e.e = *json.NewEncoder(w) // encoding/json's Encoder has no Reset: a fresh copy
	e.e.SetEscapeHTML(false)
	e.released = false
	return e
}

// encoders and decoders pool the wrappers, which hold encoding/json's
// Encoder and Decoder by value: a request body (BenchmarkRequest) is encoded
// with 3 allocations, not 5 (80 B, not 184), and decoded with 12, not 14
// (1040 B, not 1368); json.Decoder's read buffer cannot be kept (no Reset).
var encoders = sync.Pool{New: func() any { return new(Encoder) }}

// NewDecoder returns a decoder reading JSON texts from r. It buffers, so it
// may read beyond the values it returns.
//
// The decoder comes from a pool; its Release returns it there (see
// spi.Releaser). One that is never released is garbage collected.
func (Codec) NewDecoder(r io.Reader) spi.Decoder {
	d := decoders.Get().(*Decoder)
	d.d = *json.NewDecoder(r) // no Reset either
	d.released = false
	return d
}

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// Encoder writes JSON texts.
type Encoder struct {
	e        json.Encoder
	released bool
}

// Release drops e's writer and returns e to the pool; e must not be used
// again (an Encode after Release fails). A second Release does nothing.
func (e *Encoder) Release() {
	if e.released {
		return
	}
	e.released = true
	e.e = json.Encoder{}
	encoders.Put(e)
}

// Release drops d's reader and buffer and returns d to the pool; d must not
// be used again (a Decode after Release fails). The values it decoded stay
// valid. A second Release does nothing.
func (d *Decoder) Release() {
	if d.released {
		return
	}
	d.released = true
	d.d = json.Decoder{}
	decoders.Put(d)
}

var errReleased = errors.New("used after Release")

// Encode writes v. A value encoding/json cannot encode (a channel, a func, a
// NaN, a cycle) is an *spi.Error of status SERIALIZATION_ERROR naming its
// type.
func (e *Encoder) Encode(v any) error {
	if e.released {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, errReleased)
	}
	if err := e.e.Encode(v); err != nil {
		return spi.Errorf(spi.StatusSerializationError, "json: encode %T: %w", v, err)
	}
	return nil
}

// Decoder reads JSON texts.
type Decoder struct {
	d        json.Decoder
	released bool
}

// Decode reads the next JSON text into v, a non-nil pointer. At the end of
// the input the error wraps io.EOF.
func (d *Decoder) Decode(v any) error {
	if d.released {
		return fmt.Errorf("json: decode into %T: %w", v, errReleased)
	}
	if err := d.d.Decode(v); err != nil {
		return fmt.Errorf("json: decode into %T: %w", v, err)
	}
	return nil
}

var (
	_ spi.Codec    = Codec{}
	_ spi.Encoder  = (*Encoder)(nil)
	_ spi.Decoder  = (*Decoder)(nil)
	_ spi.Releaser = (*Encoder)(nil)
	_ spi.Releaser = (*Decoder)(nil)
)

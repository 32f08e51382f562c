package exchange

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/airnode/airnode/spi"
)

// rawCodec is a minimal reflection-free codec (wire id 3) for benchmarks:
// strings, []byte, int and map[string]string as length-prefixed bytes. With
// it, BenchmarkInvoke shows what the exchange itself costs next to raw TCP.
type rawCodec struct{}

func (rawCodec) Name() string                       { return "raw" }
func (rawCodec) ID() uint8                          { return 3 }
func (rawCodec) NewEncoder(w io.Writer) spi.Encoder { return rawEnc{w.(*frameBuf)} }
func (rawCodec) NewDecoder(r io.Reader) spi.Decoder { return &rawDec{r: r.(io.ByteReader), rr: r} }

type rawEnc struct{ f *frameBuf }

func (e rawEnc) bytes(b []byte) {
	e.f.b = binary.AppendUvarint(e.f.b, uint64(len(b)))
	e.f.b = append(e.f.b, b...)
}

func (e rawEnc) Encode(v any) error {
	switch v := v.(type) {
	case nil:
		e.f.b = binary.AppendUvarint(e.f.b, 0)
	case string:
		e.bytes([]byte(v))
	case []byte:
		e.bytes(v)
	case int:
		e.f.b = binary.AppendUvarint(e.f.b, uint64(v))
	case map[string]string:
		e.f.b = binary.AppendUvarint(e.f.b, uint64(len(v)))
		for k, x := range v {
			e.bytes([]byte(k))
			e.bytes([]byte(x))
		}
	default:
		return fmt.Errorf("raw codec: cannot encode %T", v)
	}
	return nil
}

type rawDec struct {
	r  io.ByteReader
	rr io.Reader
}

func (d *rawDec) bytes() ([]byte, error) {
	n, err := binary.ReadUvarint(d.r)
	if err != nil || n > 1<<24 {
		return nil, errors.New("raw codec: bad length")
	}
	b := make([]byte, n)
	_, err = io.ReadFull(d.rr, b)
	return b, err
}

func (d *rawDec) Decode(v any) error {
	switch v := v.(type) {
	case *string:
		b, err := d.bytes()
		*v = string(b)
		return err
	case *[]byte:
		b, err := d.bytes()
		*v = b
		return err
	case *any:
		b, err := d.bytes()
		*v = b
		return err
	case *int:
		n, err := binary.ReadUvarint(d.r)
		*v = int(n)
		return err
	case *map[string]string:
		n, err := binary.ReadUvarint(d.r)
		if err != nil || n > 1024 {
			return errors.New("raw codec: bad map length")
		}
		if n == 0 {
			*v = nil
			return nil
		}
		m := make(map[string]string, n)
		for range n {
			k, err := d.bytes()
			if err != nil {
				return err
			}
			x, err := d.bytes()
			if err != nil {
				return err
			}
			m[string(k)] = string(x)
		}
		*v = m
		return nil
	}
	return fmt.Errorf("raw codec: cannot decode into %T", v)
}

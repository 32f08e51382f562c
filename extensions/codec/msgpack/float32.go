package msgpack

import (
	"math"
	"reflect"
	"strconv"

	vm "github.com/vmihailenco/msgpack/v5"
)

// msgpack reads a float32 target only from a float32 (or an integer): a
// float64 on the wire, which is what `airnode call` and every JSON or
// generic caller sends for 1.5, failed with "invalid code=cb decoding
// float32", so no float32 parameter could be called that way. As
// encoding/json does, a float64 is read into a float32, rounded to the
// nearest, and one beyond float32's range is a *RangeError (an infinity
// or NaN stays itself).

var typeOfFloat32 = reflect.TypeFor[float32]()

// readFloat32 reads a float or an integer as a float32.
func readFloat32(d *vm.Decoder) (float32, error) {
	f, err := d.DecodeFloat64()
	if err != nil {
		return 0, err
	}
	if math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
		return 0, &RangeError{Target: "float32", Value: strconv.FormatFloat(f, 'g', -1, 64),
			Min: strconv.FormatFloat(-math.MaxFloat32, 'g', 3, 32), Max: strconv.FormatFloat(math.MaxFloat32, 'g', 3, 32), Float: true}
	}
	return float32(f), nil
}

// registerFloat32 registers, with registerInts, the decoders of float32
// and *float32 (see registerInt for why the pointer type too).
func registerFloat32() {
	registerDecoder(typeOfFloat32, func(d *vm.Decoder, v reflect.Value) error {
		f, err := readFloat32(d)
		if err == nil {
			v.SetFloat(float64(f))
		}
		return err
	})
}

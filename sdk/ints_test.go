package sdk

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

type narrowCalc struct{}

func (narrowCalc) U64(a uint64) uint64 { return a }
func (narrowCalc) I8(a int8) int8      { return a }

// Tester7 item 1, the plugin hop (always msgpack from the host): an
// argument beyond its parameter type's range was wrapped (Add of
// 18446744073709551615 and 1 gave 0). It is a BAD_REQUEST saying what was
// sent and the range, in both codecs of the hop; a lossless conversion
// (2.0 into an int) still passes.
func TestServiceArgumentOutOfRangeIsBadRequest(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "calc", Impl: adder{}}, {Name: "narrow", Impl: narrowCalc{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pluginrpc.CodecMsgpack, pluginrpc.CodecJSON} {
		codec, _ := pluginrpc.CodecByName(name)
		enc := func(v any) []byte { b, _ := codec.Marshal(v); return b }
		for _, c := range []struct {
			service, method string
			args            [][]byte
			want            string // the msgpack message
		}{
			{"calc", "Add", [][]byte{enc(uint64(math.MaxUint64)), enc(1)},
				"calc.Add argument 0 (int): want an integer in -9223372036854775808..9223372036854775807, got an integer (18446744073709551615)"},
			{"narrow", "U64", [][]byte{enc(-1)},
				"narrow.U64 argument 0 (uint64): want an integer in 0..18446744073709551615, got an integer (-1)"},
			{"narrow", "U64", [][]byte{enc(float64(math.MaxUint64) + 1)}, // 2^64: no integer in msgpack
				"narrow.U64 argument 0 (uint64): want an integer, got a float (1.8446744073709552e+19)"},
			{"narrow", "I8", [][]byte{enc(300)},
				"narrow.I8 argument 0 (int8): want an integer in -128..127, got an integer (300)"},
		} {
			_, err := h.Invoke(context.Background(), c.service, c.method, c.args, codec, nil)
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest {
				t.Errorf("%s: %s.%s: %v, want BAD_REQUEST", name, c.service, c.method, err)
				continue
			}
			if name == pluginrpc.CodecMsgpack && se.Message != c.want {
				t.Errorf("%s: %s.%s: %q, want %q", name, c.service, c.method, se.Message, c.want)
			}
		}
		out, err := h.Invoke(context.Background(), "narrow", "U64", [][]byte{enc(uint64(math.MaxUint64))}, codec, nil)
		var u uint64
		if err != nil || codec.Unmarshal(out, &u) != nil || u != math.MaxUint64 {
			t.Errorf("%s: U64(MaxUint64) = %d, %v", name, u, err)
		}
	}
}

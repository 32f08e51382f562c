package sdk

import (
	"context"
	"errors"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// A plugin service's undecodable argument says what was sent, as an
// in-process service's does: "got an integer (123)", not msgpack's
// "invalid code=d3".
func TestServiceArgumentMismatchSaysWhatWasSent(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "calc", Impl: adder{}}})
	if err != nil {
		t.Fatal(err)
	}
	codec, _ := pluginrpc.CodecByName(pluginrpc.CodecMsgpack)
	enc := func(v any) []byte { b, _ := codec.Marshal(v); return b }
	for _, c := range []struct {
		method string
		args   [][]byte
		want   string
	}{
		{"Add", [][]byte{enc("x"), enc(1)}, `calc.Add argument 0 (int): want an integer, got a string ("x")`},
		{"Add", [][]byte{enc(1), enc(2.5)}, "calc.Add argument 1 (int): want an integer, got a float (2.5)"},
		{"Norm1", [][]byte{enc(true)}, "calc.Norm1 argument 0 (sdk.point): want an object with sdk.point's fields, got a bool (true)"},
	} {
		_, err := h.Invoke(context.Background(), "calc", c.method, c.args, codec, nil)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
			t.Errorf("%s: %v, want BAD_REQUEST %q", c.method, err, c.want)
		}
	}
}

// A plugin service called with the wrong number of arguments names the
// parameter types, as an in-process service's count error does
// (kernel's countError): "calc.Add takes 2 arguments (int, int), got 1",
// not the count alone (fix-ay leftover).
func TestServiceArgumentCountNamesTheTypes(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "calc", Impl: adder{}}})
	if err != nil {
		t.Fatal(err)
	}
	codec, _ := pluginrpc.CodecByName(pluginrpc.CodecMsgpack)
	enc := func(v any) []byte { b, _ := codec.Marshal(v); return b }
	for _, c := range []struct {
		method string
		args   [][]byte
		want   string
	}{
		{"Add", [][]byte{enc(1)}, "calc.Add takes 2 arguments (int, int), got 1"},
		{"Norm1", nil, "calc.Norm1 takes 1 argument (sdk.point), got 0"},
		{"Add", [][]byte{enc([]any{1, 2})}, "calc.Add takes 2 arguments (int, int), got 1, an array of 2 elements: pass each argument separately (airnode call ... Add 1 2)"},
	} {
		_, err := h.Invoke(context.Background(), "calc", c.method, c.args, codec, nil)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
			t.Errorf("%s with %d arguments: %v, want BAD_REQUEST %q", c.method, len(c.args), err, c.want)
		}
	}
}

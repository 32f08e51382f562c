package sdk

import (
	"context"
	"errors"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// New-user finding: a plugin's Norm({"x":3,"y":4}) on point{X, Y int}
// returned 0. A plugin service's struct argument now reads as an
// in-process service's: keys match fields ignoring case, and a key naming
// no field is, in a generic call (spi.AttachmentGeneric), a BAD_REQUEST
// naming it and the fields; in any other call it is ignored (a consumer
// newer than the plugin).
func TestStructArgumentFields(t *testing.T) {
	h, err := newServiceHandler([]Service{{Name: "calc", Impl: adder{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pluginrpc.CodecMsgpack, pluginrpc.CodecJSON} {
		codec, _ := pluginrpc.CodecByName(name)
		enc := func(v any) []byte { b, _ := codec.Marshal(v); return b }
		out, err := h.Invoke(context.Background(), "calc", "Norm1", [][]byte{enc(map[string]any{"x": 1, "y": 2})}, codec, nil)
		var n int
		if err == nil {
			err = codec.Unmarshal(out, &n)
		}
		if err != nil || n != 3 {
			t.Errorf("%s: Norm1({x:1, y:2}) = %d, %v; want 3", name, n, err)
		}
		generic := map[string]string{spi.AttachmentGeneric: spi.GenericTrue}
		_, err = h.Invoke(context.Background(), "calc", "Norm1", [][]byte{enc(map[string]any{"X": 1, "Z": 2})}, codec, generic)
		want := `calc.Norm1 argument 0 (sdk.point): got a map with unknown field "Z" in point (fields: X, Y)`
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != want {
			t.Errorf("%s: generic Norm1({X:1, Z:2}): %v, want BAD_REQUEST %q", name, err, want)
		}
		out, err = h.Invoke(context.Background(), "calc", "Norm1", [][]byte{enc(map[string]any{"X": 1, "Z": 2})}, codec, nil)
		n = 0
		if err == nil {
			err = codec.Unmarshal(out, &n)
		}
		if err != nil || n != 1 {
			t.Errorf("%s: Norm1({X:1, Z:2}) = %d, %v; want 1, the key Z ignored", name, n, err)
		}
	}
}

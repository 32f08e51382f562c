package json_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCodec(t, json.Codec{}) }

func TestBodyIsReadableJSON(t *testing.T) {
	var buf bytes.Buffer
	enc := json.Codec{}.NewEncoder(&buf)
	for _, v := range []any{"demo.Echo", "Echo", map[string]string(nil), 1, "<b>&</b>"} {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if want := "\"demo.Echo\"\n\"Echo\"\nnull\n1\n\"<b>&</b>\"\n"; buf.String() != want {
		t.Fatalf("body %q, want %q", buf.String(), want)
	}
}

func TestEncodeErrorIsSerializationError(t *testing.T) {
	for _, v := range []any{make(chan int), math.NaN()} {
		err := json.Codec{}.NewEncoder(io.Discard).Encode(v)
		if !errors.Is(err, spi.ErrSerialization) {
			t.Errorf("Encode(%T): %v, want SERIALIZATION_ERROR", v, err)
		}
	}
}

func TestDeepNestingIsAnError(t *testing.T) {
	deep := strings.Repeat("[", 1_000_000)
	var v any
	if err := (json.Codec{}).NewDecoder(strings.NewReader(deep)).Decode(&v); err == nil {
		t.Fatal("a million nested arrays: nil error")
	}
}

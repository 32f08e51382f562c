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

// A second Release must not put the same encoder or decoder in the pool
// twice (two later bodies would share it), and a released one refuses work.
func TestReleaseTwiceIsHarmless(t *testing.T) {
	body := []byte("\"x\"\n")
	dec := json.Codec{}.NewDecoder(bytes.NewReader(body))
	spi.Release(dec)
	spi.Release(dec)
	var s string
	if err := dec.Decode(&s); err == nil || !strings.Contains(err.Error(), "after Release") {
		t.Fatalf("Decode after Release: %v, want an error", err)
	}
	d1 := json.Codec{}.NewDecoder(bytes.NewReader(body))
	d2 := json.Codec{}.NewDecoder(bytes.NewReader(body))
	if d1 == d2 {
		t.Fatal("two NewDecoder calls after a double Release returned the same decoder")
	}
	for _, d := range []spi.Decoder{d1, d2} {
		if err := d.Decode(&s); err != nil || s != "x" {
			t.Fatalf("decoder after a double Release read %q, %v", s, err)
		}
	}

	enc := json.Codec{}.NewEncoder(io.Discard)
	spi.Release(enc)
	spi.Release(enc)
	if err := enc.Encode("x"); !errors.Is(err, spi.ErrSerialization) {
		t.Fatalf("Encode after Release: %v, want SERIALIZATION_ERROR", err)
	}
	e1, e2 := json.Codec{}.NewEncoder(io.Discard), json.Codec{}.NewEncoder(io.Discard)
	if e1 == e2 {
		t.Fatal("two NewEncoder calls after a double Release returned the same encoder")
	}
}

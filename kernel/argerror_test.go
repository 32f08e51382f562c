package kernel

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	vm "github.com/vmihailenco/msgpack/v5"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// An argument the provider cannot decode into its parameter's type is
// answered BAD_REQUEST saying, in the caller's terms, what was sent and
// what was wanted — not msgpack's "invalid code=d3" — over a real
// loopback connection.
func TestUndecodableArgumentSaysWhatWasSent(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo")
	cases := []struct {
		method string
		arg    any
		want   string
	}{
		{"Fail", 123, "demo.Echo.Fail argument 0 (string): want a string, got an integer (123)"},
		{"Sleep", "x", `demo.Echo.Sleep argument 0 (int): want an integer, got a string ("x")`},
		{"Payload", map[string]any{"n": 1}, `demo.Echo.Payload argument 0 (int): want an integer, got a map ({"n":1})`},
		{"Sleep", true, "demo.Echo.Sleep argument 0 (int): want an integer, got a bool (true)"},
	}
	for _, c := range cases {
		_, err := r.Invoke(ctxT(t), c.method, c.arg)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
			t.Errorf("%s(%#v): %v, want BAD_REQUEST %q", c.method, c.arg, err, c.want)
		}
	}
}

// On the provider the BAD_REQUEST keeps the codec's error as its cause,
// down to msgpack's own.
func TestUndecodableArgumentKeepsTheCause(t *testing.T) {
	mt, err := newMethodTable(demo.New("p", 1))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := mt.lookup("demo.Echo", "Fail")
	b, err := vm.Marshal(123)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.decodeArgs("demo.Echo", 1, msgpack.Codec{}.NewDecoder(bytes.NewReader(b)), nil, false)
	var se *spi.Error
	var te *msgpack.TypeError
	if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !errors.As(err, &te) {
		t.Fatalf("decodeArgs: %v, want BAD_REQUEST caused by a *msgpack.TypeError", err)
	}
	if cause := errors.Unwrap(te); cause == nil || !strings.Contains(cause.Error(), "invalid code=") {
		t.Errorf("the type error's cause is %v, want msgpack's invalid code error", cause)
	}
}

// A generic service's argument error names the argument and keeps the
// codec's text and error (a type mismatch cannot happen: any value fits).
func TestGenericArgumentErrorKeepsTheCodecText(t *testing.T) {
	cause := errors.New("msgpack: decode into *interface {}: unexpected EOF")
	err := argError("demo.Echo", "Echo", 1, "", cause)
	if err.Status != spi.StatusBadRequest || err.Message != "demo.Echo.Echo argument 1: "+cause.Error() || !errors.Is(err, cause) {
		t.Errorf("argError = %q (cause %v), want BAD_REQUEST naming argument 1 with the codec's error", err.Message, err.Cause)
	}
}

package integration

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Under codec=json a plain string sent for a protobuf message parameter
// (protojson's form, which codec=protobuf reads) is BAD_REQUEST naming the
// message type as it is declared, without the pointers the kernel decodes
// through: it said "json: decode into **wrapperspb.StringValue". A []byte
// parameter is named []byte in every part of the message, encoding/json's
// too ("Go value of type []uint8" before). Real loopback.
func TestWordsJSONNamesParameterTypes(t *testing.T) {
	cat := bundle.Catalogs()
	p := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), Greeter{}, spi.MustParse("airnode://127.0.0.1:0/words.Greeter?codec=json"))
	if err != nil {
		t.Fatal(err)
	}
	u := "airnode://" + e.URL().Address() + "/words.Greeter?codec=json"
	c := kernel.NewNode(cat, kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	r, err := c.Refer(ctxT(t), spi.MustParse(u+"&timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method string
		arg    any
		want   string
	}{
		{"Greet", "bob", "words.Greeter.Greet argument 0 (*wrapperspb.StringValue): " +
			`want an object with wrapperspb.StringValue's fields, got a string ("bob")`},
		{"Echo", map[string]any{"a": 1}, "words.Greeter.Echo argument 0 ([]byte): " +
			`want base64 bytes, got a map ({"a":1})`},
	}
	for _, c := range cases {
		_, err := r.Invoke(ctxT(t), c.method, c.arg)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
			t.Errorf("Invoke(%s, %#v): %v, want BAD_REQUEST %q", c.method, c.arg, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "**") || strings.Contains(err.Error(), "uint8")) {
			t.Errorf("Invoke(%s): %q names reflect's spelling of a type", c.method, err)
		}
	}
	// The message's own JSON form still works under codec=json.
	if got, err := r.Invoke(ctxT(t), "Greet", map[string]any{"value": "ann"}); err != nil {
		t.Errorf("Invoke(Greet, {value: ann}): %v", err)
	} else if m, _ := got.(map[string]any); m["value"] != "hello ann" {
		t.Errorf("Invoke(Greet, {value: ann}) = %#v, want value hello ann", got)
	}
}

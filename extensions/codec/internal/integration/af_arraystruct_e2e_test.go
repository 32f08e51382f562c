package integration

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// nu78 finding 3: an array as the value of a struct argument is
// BAD_REQUEST whatever its length, the method not run, under msgpack as
// under json: an empty one ran the method with a zero struct, and one of
// one element per field filled the fields in order. An empty argument
// list is another thing, refused as a count naming the type: "takes 1 argument (integration.Ticket), got 0".
func TestNu78_ArrayValueForStructArgument(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		r := exportAs(t, Shop{}, "nu78.Shop", codec)
		for _, v := range []any{[]any{}, []any{int64(7)}} {
			got, err := r.Invoke(ctxT(t), "Echo", v)
			if statusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "argument 0") {
				t.Errorf("%s: Invoke(Echo, %#v) = %v, %v; want BAD_REQUEST for argument 0", codec, v, got, err)
			} else if !strings.Contains(err.Error(), "got an array (") ||
				!strings.Contains(err.Error(), "want an object with integration.Ticket's fields") {
				t.Errorf("%s: Invoke(Echo, %#v): %v, want it to say an array was sent where a map is wanted", codec, v, err)
			}
			var out Ticket
			if err := r.Call(ctxT(t), "Echo", []any{v}, &out); statusOf(err) != spi.StatusBadRequest {
				t.Errorf("%s: Call(Echo, []any{%#v}) = %+v, %v; want BAD_REQUEST", codec, v, out, err)
			}
		}
		// The argument list empty: no argument at all.
		for name, call := range map[string]func() error{
			"Invoke(Echo)":             func() error { _, err := r.Invoke(ctxT(t), "Echo"); return err },
			"Invoke(Echo, []any{}...)": func() error { _, err := r.Invoke(ctxT(t), "Echo", []any{}...); return err },
			"Call(Echo, []any{})":      func() error { var out Ticket; return r.Call(ctxT(t), "Echo", []any{}, &out) },
		} {
			if err := call(); statusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "nu78.Shop.Echo takes 1 argument (integration.Ticket), got 0") {
				t.Errorf("%s: %s: %v, want BAD_REQUEST takes 1 argument (integration.Ticket), got 0", codec, name, err)
			}
		}
		// A map is the struct, as before.
		if got, err := r.Invoke(ctxT(t), "Echo", map[string]any{"id": 7}); err != nil {
			t.Errorf("%s: Invoke(Echo, {id: 7}) = %v, %v", codec, got, err)
		}
	}
}

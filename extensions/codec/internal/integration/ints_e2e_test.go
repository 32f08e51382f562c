package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Narrow is a service with narrow integer parameters, as tester7's.
type Narrow struct{}

// I8 returns a as text.
func (Narrow) I8(_ context.Context, a int8) (string, error) { return fmt.Sprint(a), nil }

// U16 returns a as text.
func (Narrow) U16(_ context.Context, a uint16) (string, error) { return fmt.Sprint(a), nil }

// I32 returns a as text.
func (Narrow) I32(_ context.Context, a int32) (string, error) { return fmt.Sprint(a), nil }

// I64 returns a as text.
func (Narrow) I64(_ context.Context, a int64) (string, error) { return fmt.Sprint(a), nil }

// U64 returns a as text.
func (Narrow) U64(_ context.Context, a uint64) (string, error) { return fmt.Sprint(a), nil }

// Order is the provider's reply: a wide ID.
type Order struct {
	ID   int64
	Item string
}

// Get returns the order with id.
func (Narrow) Get(_ context.Context, id int64) (Order, error) {
	return Order{ID: id, Item: "book"}, nil
}

// Echo returns n, for a consumer reading it into a narrower integer.
func (Narrow) Echo(_ context.Context, n int64) (int64, error) { return n, nil }

// F32 returns f, printed.
func (Narrow) F32(_ context.Context, f float32) (string, error) { return fmt.Sprint(f), nil }

// exportNarrow starts a provider node exporting Narrow with codec and
// returns a reference of a consumer node calling it directly.
func exportNarrow(t *testing.T, codec string) *kernel.Reference {
	t.Helper()
	return exportAs(t, Narrow{}, "acme.Narrow", codec)
}

// Tester7 item 1: with msgpack, the default codec, an argument that
// overflows its parameter type reached the provider wrapped (I8 300 ran
// with 44, I64 18446744073709551615 with -1) and a reply that overflows
// the consumer's field was read wrapped (ID 1000 into an int8 gave -24),
// without an error, where json answers BAD_REQUEST and BAD_RESPONSE. Both
// codecs now refuse; the msgpack provider says what was sent and the range.
func TestIntegerOverflowIsRefusedEndToEnd(t *testing.T) {
	args := []struct {
		method string
		arg    any
		msg    string // the provider's BAD_REQUEST in either codec, after "acme.Narrow.<method> argument 0 "
	}{
		{"I8", 300, "(int8): want an integer in -128..127, got an integer (300)"},
		{"I8", -200, "(int8): want an integer in -128..127, got an integer (-200)"},
		{"U16", 70000, "(uint16): want an integer in 0..65535, got an integer (70000)"},
		{"U16", -1, "(uint16): want an integer in 0..65535, got an integer (-1)"},
		{"I32", int64(1)<<32 + 1, "(int32): want an integer in -2147483648..2147483647, got an integer (4294967297)"},
		{"I32", int64(1)<<40 + 7, "(int32): want an integer in -2147483648..2147483647, got an integer (1099511627783)"},
		{"I64", uint64(math.MaxUint64), "(int64): want an integer in -9223372036854775808..9223372036854775807, got an integer (18446744073709551615)"},
		{"I64", uint64(math.MaxInt64) + 1, "(int64): want an integer in -9223372036854775808..9223372036854775807, got an integer (9223372036854775808)"},
		{"U64", int64(-5), "(uint64): want an integer in 0..18446744073709551615, got an integer (-5)"},
	}
	good := []struct {
		method string
		arg    any
		want   string
	}{
		{"I8", 127, "127"}, {"I8", -128, "-128"}, {"U16", 65535, "65535"}, {"I32", math.MinInt32, "-2147483648"},
		{"I64", int64(math.MinInt64), "-9223372036854775808"}, {"U64", uint64(math.MaxUint64), "18446744073709551615"},
	}
	for _, codec := range []string{"json", "msgpack"} {
		t.Run(codec, func(t *testing.T) {
			r := exportNarrow(t, codec)
			for _, c := range good {
				var s string
				if err := r.Call(ctxT(t), c.method, []any{c.arg}, &s); err != nil || s != c.want {
					t.Errorf("%s(%v) = %q, %v; want %q", c.method, c.arg, s, err, c.want)
				}
			}
			for _, c := range args {
				var s string
				err := r.Call(ctxT(t), c.method, []any{c.arg}, &s)
				var se *spi.Error
				if !errors.As(err, &se) || se.Status != spi.StatusBadRequest {
					t.Errorf("%s(%v) = %q, %v; want BAD_REQUEST", c.method, c.arg, s, err)
					continue
				}
				if want := "acme.Narrow." + c.method + " argument 0 " + c.msg; se.Message != want {
					t.Errorf("%s(%v): %q, want %q", c.method, c.arg, se.Message, want)
				}
			}

			var small struct {
				ID   int8
				Item string
			}
			if err := r.Call(ctxT(t), "Get", []any{100}, &small); err != nil || small.ID != 100 {
				t.Errorf("Get(100) into an int8 ID: %+v, %v", small, err)
			}
			for _, id := range []int64{1000, -129, math.MaxInt64} {
				small.ID = 0
				err := r.Call(ctxT(t), "Get", []any{id}, &small)
				if !isBadResponse(err, codec, fmt.Sprint(id), "int8") {
					t.Errorf("Get(%d) into an int8 ID: %+v, %v; want BAD_RESPONSE", id, small, err)
				}
			}
			var u uint16
			if err := r.Call(ctxT(t), "Echo", []any{-1}, &u); !isBadResponse(err, codec, "-1", "uint16") {
				t.Errorf("Echo(-1) into a uint16: %d, %v; want BAD_RESPONSE", u, err)
			}
		})
	}
}

// isBadResponse reports whether err is a BAD_RESPONSE; from msgpack, one
// naming the value and the type.
func isBadResponse(err error, codec, value, typ string) bool {
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusBadResponse {
		return false
	}
	return codec != "msgpack" || strings.Contains(se.Message, "integer "+value+" out of range for "+typ)
}

// A float32 parameter takes a float64 argument (what a generic caller and
// `airnode call` send for 1.5) in both codecs; msgpack failed it with
// "invalid code=cb decoding float32".
func TestFloat32ParameterEndToEnd(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			r := exportNarrow(t, codec)
			var got string
			if err := r.Call(ctxT(t), "F32", []any{1.5}, &got); err != nil || got != "1.5" {
				t.Fatalf("F32(1.5) = %q, %v", got, err)
			}
		})
	}
}

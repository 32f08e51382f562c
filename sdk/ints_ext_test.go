package sdk_test

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// Tester7 item 1, end to end through a real plugin process
// (testdata/narrow): a consumer in json or msgpack calling a plugin's
// Add(a, b int) with 18446744073709551615 and 1 got 0, because the
// host-to-plugin hop is msgpack and msgpack wrapped the integer. It is now
// a BAD_REQUEST naming the value and the range, whatever the consumer's
// codec; a uint64 parameter takes 18446744073709551615 and refuses -1 and
// 2^64; and a plugin's reply beyond the consumer's type is a BAD_RESPONSE.
func TestPluginArgumentOutOfRangeIsBadRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, consumer := exportPlugin(t, ctx, "narrow", "acme.Narrow", io.Discard)

	for _, codec := range []string{"json", "msgpack"} {
		ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+addr+"/acme.Narrow?timeout=5s&codec="+codec), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		bad := []struct {
			method string
			args   []any
			want   string // in the BAD_REQUEST's message
		}{
			{"Add", []any{uint64(math.MaxUint64), 1}, "acme.Narrow.Add argument 0 (int): want an integer in -9223372036854775808..9223372036854775807, got an integer (18446744073709551615)"},
			{"U64", []any{-1}, "acme.Narrow.U64 argument 0 (uint64): want an integer in 0..18446744073709551615, got an integer (-1)"},
			{"U64", []any{float64(math.MaxUint64) + 1}, "acme.Narrow.U64 argument 0 (uint64): want an integer"},
			{"I8", []any{300}, "acme.Narrow.I8 argument 0 (int8): want an integer in -128..127, got an integer (300)"},
		}
		for _, c := range bad {
			_, err := ref.Invoke(ctx, c.method, c.args...)
			var se *spi.Error
			if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || !strings.Contains(se.Message, c.want) {
				t.Errorf("%s: %s%v: %v, want BAD_REQUEST containing %q", codec, c.method, c.args, err, c.want)
			}
		}
		var sum int
		if err := ref.Call(ctx, "Add", []any{2, 3}, &sum); err != nil || sum != 5 {
			t.Errorf("%s: Add(2, 3) = %d, %v", codec, sum, err)
		}
		var max uint64
		if err := ref.Call(ctx, "U64", []any{uint64(math.MaxUint64)}, &max); err != nil || max != math.MaxUint64 {
			t.Errorf("%s: U64(MaxUint64) = %d, %v", codec, max, err)
		}
		var small int8
		_, err = ref.Invoke(ctx, "Wide", 1000)
		if err != nil {
			t.Fatalf("%s: Wide(1000): %v", codec, err)
		}
		err = ref.Call(ctx, "Wide", []any{1000}, &small)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusBadResponse {
			t.Errorf("%s: Wide(1000) into an int8: %d, %v; want BAD_RESPONSE", codec, small, err)
		}
	}
}

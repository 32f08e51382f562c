package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Reservation is a struct argument with two fields.
type Reservation struct {
	Lines   []string
	OrderID string
}

// Store is a service taking a Reservation.
type Store struct{}

// Reserve returns the order's id.
func (Store) Reserve(_ context.Context, o Reservation) (string, error) { return o.OrderID, nil }

// tester79 #9: an unknown-field BAD_REQUEST named only the first unknown
// field, so `Reserve '{"Lnes":[],"Order":"o"}'` had to be fixed one key
// per call. Every unknown key of the object is named at once, each with
// its did-you-mean (Order is OrderID lengthened: suggest's Stem rule),
// and past five the rest are counted.
func TestAT_UnknownFieldsAllNamed(t *testing.T) {
	for _, codec := range []string{"json", "msgpack"} {
		t.Run(codec, func(t *testing.T) {
			r := exportAs(t, Store{}, "acme.Store", codec)
			generic := spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue)
			cases := []struct {
				arg  map[string]any
				want string
			}{
				{map[string]any{"Lnes": []any{}, "Order": "o"},
					`acme.Store.Reserve argument 0 (integration.Reservation): got a map with unknown fields "Lnes" (did you mean "Lines"?), "Order" (did you mean "OrderID"?) in Reservation (fields: Lines, OrderID)`},
				{map[string]any{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "OrderID": "o"},
					`acme.Store.Reserve argument 0 (integration.Reservation): got a map with unknown fields "a", "b", "c", "d", "e" and 2 more in Reservation (fields: Lines, OrderID)`},
				// one unknown key: the message it always had
				{map[string]any{"Lnes": []any{}, "OrderID": "o"},
					`acme.Store.Reserve argument 0 (integration.Reservation): got a map with unknown field "Lnes" in Reservation (fields: Lines, OrderID); did you mean "Lines"?`},
			}
			for _, c := range cases {
				_, err := r.Invoke(generic, "Reserve", c.arg)
				var se *spi.Error
				if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
					t.Errorf("generic Reserve(%v): %v\nwant BAD_REQUEST %q", c.arg, err, c.want)
				}
			}
		})
	}
}

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/airnode/airnode/spi"
)

// AvItem and AvOrder are tester81's struct parameters (#9).
type AvItem struct {
	SKU   string
	Price float64
	Qty   uint8
}

// AvOrder holds every shape a struct parameter commonly has.
type AvOrder struct {
	ID    int64
	Name  string
	Tags  []string
	Item  AvItem
	Items []AvItem
	Meta  map[string]int32
}

// AvShop takes an AvOrder, and two arguments.
type AvShop struct{}

// Place returns o's ID.
func (AvShop) Place(_ context.Context, o AvOrder) (int64, error) { return o.ID, nil }

// Two returns its arguments' SKU and n.
func (AvShop) Two(_ context.Context, it AvItem, n int) (string, error) { return it.SKU, nil }

// tester81 #9: an argument that does not fit says, path first, what was
// wanted there and what was sent, in both codecs' words alike.
func TestArgumentErrorSaysWantAndGot(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			r := exportAs(t, AvShop{}, "acme.Shop", codec)
			cases := []struct {
				method string
				args   []string // JSON, as airnode call takes them
				want   string
			}{
				{"Place", []string{`{"Items":{"SKU":"x"}}`},
					`acme.Shop.Place argument 0 (integration.AvOrder), at Items: want an array of integration.AvItem, got a map ({"SKU":"x"})`},
				{"Place", []string{`{"Item":[1,2]}`},
					`acme.Shop.Place argument 0 (integration.AvOrder), at Item: want an object with integration.AvItem's fields, got an array ([1,2])`},
				{"Place", []string{`"str"`},
					`acme.Shop.Place argument 0 (integration.AvOrder): want an object with integration.AvOrder's fields, got a string ("str")`},
				{"Place", []string{`{"Items":[{"SKU":"a"},{"Qty":"3"}]}`},
					`acme.Shop.Place argument 0 (integration.AvOrder), at Items[1].Qty: want an integer, got a string ("3")`},
				{"Place", []string{`{"Meta":{"a":"b"}}`},
					`acme.Shop.Place argument 0 (integration.AvOrder), at Meta["a"]: want an integer, got a string ("b")`},
				{"Two", []string{`[{"SKU":"a"},1]`},
					`acme.Shop.Two takes 2 arguments (integration.AvItem, int), got 1, an array of 2 elements: pass each argument separately (airnode call ... Two '{"SKU":"a"}' 1)`},
			}
			for _, c := range cases {
				args := make([]any, len(c.args))
				for i, a := range c.args {
					if err := json.Unmarshal([]byte(a), &args[i]); err != nil {
						t.Fatal(err)
					}
				}
				_, err := r.Invoke(spi.WithAttachments(ctxT(t), spi.AttachmentGeneric, spi.GenericTrue), c.method, args...)
				var se *spi.Error
				if !errors.As(err, &se) || se.Status != spi.StatusBadRequest || se.Message != c.want {
					t.Errorf("%s %s:\n got %v\nwant BAD_REQUEST %s", c.method, c.args, err, c.want)
				}
			}
		})
	}
}

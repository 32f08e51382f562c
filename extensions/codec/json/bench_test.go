package json_test

import (
	stdjson "encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func BenchmarkRequest(b *testing.B) { spitest.BenchmarkCodec(b, json.Codec{}) }

// BenchmarkEncodeUTF8Check is the cost of refusing strings that are not
// UTF-8: this codec's Encode (encoding/json, then one look for the escape
// \ufffd in the text) against encoding/json's Encoder alone, for a small
// struct and a 64 KiB string.
func BenchmarkEncodeUTF8Check(b *testing.B) {
	type order struct {
		Customer string   `json:"customer"`
		Items    []string `json:"items"`
		Note     string   `json:"note"`
	}
	values := map[string]any{
		"small": order{Customer: "ann", Items: []string{"A-1", "B-2", "C-3"}, Note: "leave at the door, ☃"},
		"64KiB": strings.Repeat("é ascii text \\ quoted ", 64<<10/22),
	}
	for name, v := range values {
		b.Run(name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := json.Codec{}.NewEncoder(io.Discard)
				if err := e.Encode(v); err != nil {
					b.Fatal(err)
				}
				spi.Release(e)
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := stdjson.NewEncoder(io.Discard)
				e.SetEscapeHTML(false)
				if err := e.Encode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

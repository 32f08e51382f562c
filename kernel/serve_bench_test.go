package kernel

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// The provider's own path, from (*server).Serve down to the service method
// and back (service lookup, method lookup, argument decode, the provider
// filter chain, localInvoker, the call), without the exchange or a
// network:
//
//	go test -run '^$' -bench ProviderServe -benchmem ./kernel
//
// cpu-ns/op is the process's CPU time per call (reportCPU), steadier than
// ns/op on a shared machine. "nofilter" exports with filter=-default (the kernel alone); "default"
// keeps the default-activated provider filters (metrics). The arguments
// come from a decoder that costs nothing (valueDecoder), except for the
// "msgpack" cases, which decode a real msgpack body as the exchange does.

// benchService has one method of each shape the provider distinguishes.
type benchService struct{}

// benchRecord is a typed struct argument.
type benchRecord struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func (benchService) Add(ctx context.Context, a, b int) (int, error) { return a + b, nil }
func (benchService) Upper(ctx context.Context, s string) (string, error) {
	return strings.ToUpper(s), nil
}
func (benchService) Touch(ctx context.Context, b []byte) error { return nil }
func (benchService) Put(ctx context.Context, r benchRecord) (benchRecord, error) {
	r.Count++
	return r, nil
}

// valueDecoder hands out preset values without allocating, as a codec
// that has already decoded the body would.
type valueDecoder struct {
	vals []any
	i    int
}

func (d *valueDecoder) Decode(v any) error {
	if d.i >= len(d.vals) {
		return errors.New("valueDecoder: no more values")
	}
	x := d.vals[d.i]
	d.i++
	switch p := v.(type) {
	case *any:
		*p = x
	case *int:
		*p = x.(int)
	case *string:
		*p = x.(string)
	case *[]byte:
		*p = x.([]byte)
	default:
		reflect.ValueOf(v).Elem().Set(reflect.ValueOf(x))
	}
	return nil
}

func BenchmarkProviderServe(b *testing.B) {
	payload := strings.Repeat("x", benchPayload)
	cases := []struct {
		name, service, method string
		args                  []any
	}{
		{"Echo", demo.Interface, "Echo", []any{payload}},
		{"Add", "bench.Service", "Add", []any{2, 3}},
		{"Upper", "bench.Service", "Upper", []any{"abc"}},
		{"Touch", "bench.Service", "Touch", []any{[]byte(payload)}},
		{"Put", "bench.Service", "Put", []any{benchRecord{Name: "n", Count: 1}}},
	}
	for _, filters := range []string{"nofilter", "default"} {
		p := NewNode(testCatalogs(b), WithLogger(quiet), WithShutdownWait(0))
		query := ""
		if filters == "nofilter" {
			query = "?filter=-default"
		}
		ctx := context.Background()
		e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/"+demo.Interface+query))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Export(ctx, benchService{}, spi.MustParse("airnode://127.0.0.1:0/bench.Service"+query)); err != nil {
			b.Fatal(err)
		}
		srv := e.srv
		for _, c := range cases {
			b.Run(filters+"/"+c.name, func(b *testing.B) {
				dec := &valueDecoder{vals: c.args}
				req := &exchange.Request{Service: c.service, Method: c.method, NumArgs: len(c.args), Args: dec,
					Remote: "127.0.0.1:1234"}
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					dec.i = 0
					if res := srv.Serve(ctx, req); res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			})
		}
		b.Run(filters+"/msgpack/Echo", func(b *testing.B) {
			var body bytes.Buffer
			codec := msgpack.Codec{}
			if err := codec.NewEncoder(&body).Encode(payload); err != nil {
				b.Fatal(err)
			}
			var rd bytes.Reader
			req := &exchange.Request{Service: demo.Interface, Method: "Echo", NumArgs: 1, Codec: codec,
				Remote: "127.0.0.1:1234"}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				rd.Reset(body.Bytes())
				req.Args = codec.NewDecoder(&rd)
				if res := srv.Serve(ctx, req); res.Err != nil {
					b.Fatal(res.Err)
				}
				spi.Release(req.Args)
			}
		})
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

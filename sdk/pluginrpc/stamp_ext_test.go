package pluginrpc_test

import (
	"context"
	"maps"
	"reflect"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// nu77 #1: a filter plugin (moody, F_MODE=stamp) that calls next and only
// adds a response attachment, in next's map when it has one, gives the
// caller next's own value and error, Go types kept (an int64 above 2^53,
// a []byte, a struct), with its attachment added. Before, any change of
// the attachments sent the plugin's JSON copy of the value back (the
// int64 rounded, the []byte a base64 string), and an attachment added to
// next's own map in place was lost.
func TestFilterPluginAddingAResponseAttachmentKeepsTheValue(t *testing.T) {
	c := startMoody(t, "F_MODE=stamp")
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: true})
	type info struct{ N int64 }
	fail := spi.Errorf(spi.StatusServiceError, "moody test: failed")
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
		if err != nil {
			t.Fatal(err)
		}
		for _, next := range []spi.Result{
			{Value: int64(12345678901234567)},
			{Value: []byte("0123456789"), Attachments: map[string]string{"k": "v"}},
			{Value: info{N: 1 << 60}, Attachments: map[string]string{"k": "v"}},
			{Err: fail, Attachments: map[string]string{"k": "v"}},
		} {
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
			res := f.Invoke(context.Background(), spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"),
				func(context.Context, *spi.Invocation) spi.Result {
					return spi.Result{Value: next.Value, Err: next.Err, Attachments: maps.Clone(next.Attachments)}
				}), inv)
			want := maps.Clone(next.Attachments)
			if want == nil {
				want = map[string]string{}
			}
			want["x-stamped"] = "moody"
			if !reflect.DeepEqual(res.Value, next.Value) || res.Err != next.Err || !maps.Equal(res.Attachments, want) {
				t.Errorf("%s: next returned %#v, %v, %v; the filter's caller got %#v, %v, %v; want that value and error, attachments %v",
					side, next.Value, next.Err, next.Attachments, res.Value, res.Err, res.Attachments, want)
			}
		}
	}
}

package pluginrpc_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// fix-r #3: the arguments a filter plugin (moody, F_MODE=mutate: the
// first argument becomes "mutated") passes to next are converted into
// the call's argument types, through Chain and through a pass alike: on a
// provider into spi.Invocation.ArgTypes (a string parameter takes it, an
// int parameter is BAD_REQUEST naming argument 0 and int, next never
// runs); on a consumer into the caller's value's type (an int: CLIENT_ERROR),
// or as JSON decodes for a generic call (the provider judges it). The
// argument the filter left alone keeps the caller's Go value.
func TestFilterPluginChangedArgumentsTakeTheCallsTypes(t *testing.T) {
	intT, strT := reflect.TypeFor[int](), reflect.TypeFor[string]()
	for _, readsResult := range []string{"true", "false"} {
		c := startMoody(t, "F_MODE=mutate", "READS_RESULT="+readsResult)
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: readsResult == "true"})
		for _, tc := range []struct {
			name     string
			side     spi.Side
			inv      spi.Invocation
			want     []any  // next's arguments
			wantErr  string // else the call's error
			wantStat spi.Status
		}{
			{"provider string", spi.Provider, spi.Invocation{Args: []any{"orig", 2}, ArgTypes: []reflect.Type{strT, intT}}, []any{"mutated", 2}, "", 0},
			{"provider int", spi.Provider, spi.Invocation{Args: []any{1, 2}, ArgTypes: []reflect.Type{intT, intT}}, nil,
				`filter "acme.moody" changed the arguments of demo.Echo.Sleep: argument 0 is "mutated", which does not decode into int`, spi.StatusBadRequest},
			{"provider without types", spi.Provider, spi.Invocation{Args: []any{int64(1), int64(2)}}, []any{"mutated", int64(2)}, "", 0},
			{"consumer int", spi.Consumer, spi.Invocation{Args: []any{1, 2}}, nil,
				`filter "acme.moody" changed the arguments of demo.Echo.Sleep: argument 0 is "mutated", which does not decode into int`, spi.StatusClientError},
			{"consumer generic", spi.Consumer, spi.Invocation{Args: []any{1, 2}, Attachments: map[string]string{spi.AttachmentGeneric: spi.GenericTrue}}, []any{"mutated", 2}, "", 0},
		} {
			name := fmt.Sprintf("READS_RESULT=%s %s", readsResult, tc.name)
			f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(tc.side)))
			if err != nil {
				t.Fatal(err)
			}
			var got []any
			next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(_ context.Context, inv *spi.Invocation) spi.Result {
				got = inv.Args
				return spi.Result{Value: "ok"}
			})
			inv := tc.inv
			inv.Service, inv.Method = "demo.Echo", "Sleep"
			res := f.Invoke(context.Background(), next, &inv)
			if tc.wantErr != "" {
				if spi.StatusOf(res.Err) != tc.wantStat || !strings.Contains(fmt.Sprint(res.Err), tc.wantErr) || next.Calls() != 0 {
					t.Errorf("%s: %v after %d calls of next; want %v %q and no call", name, res.Err, next.Calls(), tc.wantStat, tc.wantErr)
				}
				continue
			}
			if res.Err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v; next got %#v, want %#v", name, res.Err, got, tc.want)
			}
		}
	}
}

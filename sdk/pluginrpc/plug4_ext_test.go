package pluginrpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// nu48 F1: a filter plugin's rejection whose Cause is spi.ErrAccessDenied
// keeps that Cause across the boundary (a real moody process), so the
// provider's metrics filter counts it as rejected, not as a failure of
// the method; the host counts it with the token filter's kind
// (access.plugin_filter_rejections), on the provider only.
func TestPlug4FilterPluginAccessDeniedCrossesTheBoundary(t *testing.T) {
	c := startMoody(t, "F_MODE=deny")
	for _, tc := range []struct {
		side  spi.Side
		count uint64
	}{{spi.Provider, 1}, {spi.Consumer, 0}} {
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.tenant", Source: pluginrpc.StaticSource(c)})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(tc.side)))
		if err != nil {
			t.Fatal(err)
		}
		before := counters.Access.PluginFilterRejections.Load()
		var got map[string]string
		res := f.Invoke(context.Background(), seen(&got), &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		var se *spi.Error
		if !errors.As(res.Err, &se) || se.Status != spi.StatusBadRequest || se.Message != "moody: denied" || !errors.Is(res.Err, spi.ErrAccessDenied) || got != nil {
			t.Errorf("%s side: %v (%#v); want BAD_REQUEST moody: denied with Cause spi.ErrAccessDenied, the call not passed", tc.side, res.Err, se)
		}
		if n := counters.Access.PluginFilterRejections.Load() - before; n != tc.count {
			t.Errorf("%s side: plugin filter rejections +%d; want +%d", tc.side, n, tc.count)
		}
	}
}

// nu48 F4: the two errors the SDK words in the plugin name the plugin as
// plugins.yaml declares it (here acme.tenant, acme.zone), not by its
// binary's own Name() ("moody").
func TestPlug4PluginErrorsUseTheDeclaredName(t *testing.T) {
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.tenant", Source: pluginrpc.StaticSource(startMoody(t, "F_MODE=chan"))})
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"))
	if err != nil {
		t.Fatal(err)
	}
	res := f.Invoke(context.Background(), seen(new(map[string]string)), &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	const want = `SERIALIZATION_ERROR: filter "acme.tenant": short-circuit value: json: unsupported type: chan int`
	if res.Err == nil || res.Err.Error() != want {
		t.Errorf("short-circuit chan value: %v; want %s", res.Err, want)
	}

	var ev events
	lb := build(t, ev.options("acme.zone", startMoody(t, "LB_MODE=foreign")), "airnode://127.0.0.1/demo.Echo")
	cands := providers("")
	if got, err := lb.SelectContext(context.Background(), cands, &spi.Invocation{Method: "Echo"}); err != nil || got != cands[0] && got != cands[1] {
		t.Fatalf("Select = %v, %v; want the fallback's pick of a candidate", got, err)
	}
	_, fallbacks, _ := ev.get()
	const wantLB = `CLIENT_ERROR: pluginrpc: balancer "acme.zone" returned an invoker that was not a candidate`
	if len(fallbacks) != 1 || fallbacks[0].Error() != wantLB {
		t.Errorf("fallbacks %v; want one: %s", fallbacks, wantLB)
	}
}

// nu48 F5: a filter plugin's panic has its side's status, as its other
// failures do: CLIENT_ERROR in a consumer's chain, SERVER_ERROR in a
// provider's (STYLE 12; the metrics filter records a panic below it so).
func TestPlug4FilterPluginPanicHasItsSidesStatus(t *testing.T) {
	c := startMoody(t, "F_MODE=panic")
	for _, tc := range []struct {
		side spi.Side
		st   spi.Status
	}{{spi.Provider, spi.StatusServerError}, {spi.Consumer, spi.StatusClientError}} {
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.tenant", Source: pluginrpc.StaticSource(c)})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(tc.side)))
		if err != nil {
			t.Fatal(err)
		}
		res := f.Invoke(context.Background(), seen(new(map[string]string)), &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		want := tc.st.String() + `: panic in filter plugin "acme.tenant" (its Invoke): moody: asked to panic`
		if res.Err == nil || res.Err.Error() != want || spi.StatusOf(res.Err) != tc.st || strings.Count(res.Err.Error(), "_ERROR") != 1 {
			t.Errorf("%s side: %v; want %s", tc.side, res.Err, want)
		}
	}
}

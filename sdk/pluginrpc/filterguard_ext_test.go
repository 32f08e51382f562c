package pluginrpc_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// seen is the next invoker of a filter: it records the attachments it got.
func seen(got *map[string]string) spi.Invoker {
	return spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(_ context.Context, inv *spi.Invocation) spi.Result {
		*got = inv.Attachments
		return spi.Result{Value: "ok"}
	})
}

// A filter plugin cannot set, change or remove the attachments the kernel
// reserves: its changes to them are dropped (the provider's remote stays
// the peer's address), its other attachments pass, and the host warns
// once per key.
func TestFilterPluginCannotForgeReservedAttachments(t *testing.T) {
	c := startMoody(t, "F_MODE=forge")
	var log logbuf.Buffer
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c),
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
			want := map[string]string{"x-forged": "yes"}
			if side == spi.Provider {
				inv.SetAttachment(spi.AttachmentRemote, "127.0.0.1:50123")
				want[spi.AttachmentRemote] = "127.0.0.1:50123"
			}
			var got map[string]string
			if res := f.Invoke(context.Background(), seen(&got), inv); res.Err != nil {
				t.Fatal(res.Err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: the next invoker got %v; want %v", side, got, want)
			}
		}
	}
	out := log.String()
	for _, k := range []string{"remote", "timeout", "token"} {
		if n := strings.Count(out, "key="+k+" "); n != 1 {
			t.Errorf("key %s warned %d times; want once:\n%s", k, n, out)
		}
	}
	if strings.Contains(out, "forged") && !strings.Contains(out, "x-forged") {
		t.Errorf("the log shows a forged value:\n%s", out)
	}
}

// A filter plugin that says it does not read arguments gets none.
func TestFilterWithoutArgsSendsNoArguments(t *testing.T) {
	for _, reads := range []bool{true, false} {
		c := startMoody(t, "F_MODE=args", fmt.Sprintf("READS_ARGS=%v", reads))
		d, err := pluginrpc.Describe(context.Background(), c, pluginrpc.PointFilter)
		if err != nil {
			t.Fatal(err)
		}
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), WithoutArgs: d.WithoutArgs})
		f, _ := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"))
		var got map[string]string
		res := f.Invoke(context.Background(), seen(&got), &spi.Invocation{Method: "Echo", Args: []any{"a", "b"}})
		want := 0.0
		if reads {
			want = 2
		}
		if res.Err != nil || res.Value != want {
			t.Fatalf("READS_ARGS=%v: %v, %v; want %v arguments seen", reads, res.Value, res.Err, want)
		}
	}
}

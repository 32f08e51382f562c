package pluginrpc_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
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

// A filter plugin whose builder says it does not read next's result
// (ResultReader false) passes before the call: its result of its own
// after next.Invoke cannot cross the pass: the call goes on with the
// real result, and the host warns once per plugin, naming what it
// dropped (tester73 #2). Its changes to the arguments do cross (fix-r
// #3): the call goes on with them, the argument it left alone keeping
// the caller's Go value (the int 2, not JSON's float64). A filter that
// returns next's result, or passes unchanged, is not warned of.
func TestFilterPluginIgnoredResultAndArgumentsAreWarnedOnce(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"post", `plugin filter returned a result of its own after calling next.Invoke; ignored`},
		{"mutate", ""},
		{"wrap", ""},
		{"", ""},
	} {
		c := startMoody(t, "F_MODE="+tc.mode, "READS_RESULT=false")
		d, err := pluginrpc.Describe(context.Background(), c, pluginrpc.PointFilter)
		if err != nil || d.Chain {
			t.Fatalf("Describe = %+v, %v; want Chain false", d, err)
		}
		var log logbuf.Buffer
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c),
			Log: slog.New(slog.NewTextHandler(&log, nil))})
		for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
			f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				var args []any
				next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(_ context.Context, inv *spi.Invocation) spi.Result {
					args = inv.Args
					return spi.Result{Value: "real"}
				})
				res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"orig", 2}})
				want := []any{"orig", 2}
				if tc.mode == "mutate" {
					want = []any{"mutated", 2}
				}
				if res.Err != nil || res.Value != "real" || !reflect.DeepEqual(args, want) {
					t.Fatalf("F_MODE=%q %s: got %v, %v with arguments %#v; want the real result with the arguments %#v", tc.mode, side, res.Value, res.Err, args, want)
				}
			}
		}
		out := log.String()
		if tc.want == "" {
			if strings.Contains(out, "ignored") {
				t.Errorf("F_MODE=%q: warned:\n%s", tc.mode, out)
			}
			continue
		}
		if n := strings.Count(out, tc.want); n != 1 || !strings.Contains(out, "filter=acme.moody") {
			t.Errorf("F_MODE=%q: warned %d times, want once naming the filter:\n%s", tc.mode, n, out)
		}
		if tc.mode == "post" && !strings.Contains(out, `returned="SERVICE_ERROR: moody: post"`) {
			t.Errorf("the warning does not name what was returned:\n%s", out)
		}
	}
}

// info is a result value JSON would turn into a map.
type info struct{ N int }

// A filter plugin with a real next (Chain, moody's default): its result
// after next.Invoke is the caller's (post: SERVICE_ERROR wins over next's
// success), a filter returning next's result unchanged gives the caller
// the host's own result (its Go type kept, not a JSON copy) (tester73
// #2), and a change of the arguments reaches next, unwarned, the
// argument left alone keeping the caller's Go value (fix-r #3).
func TestChainFilterPluginResultIsTheCallers(t *testing.T) {
	for _, tc := range []struct{ mode, wantErr, warn string }{
		{"post", "SERVICE_ERROR: moody: post", ""},
		{"wrap", "", ""},
		{"mutate", "", ""},
	} {
		c := startMoody(t, "F_MODE="+tc.mode)
		d, err := pluginrpc.Describe(context.Background(), c, pluginrpc.PointFilter)
		if err != nil || !d.Chain {
			t.Fatalf("Describe = %+v, %v; want Chain", d, err)
		}
		var log logbuf.Buffer
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.moody", Source: pluginrpc.StaticSource(c), Chain: true,
			Log: slog.New(slog.NewTextHandler(&log, nil))})
		for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
			f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				var args []any
				next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20001/demo.Echo"), func(_ context.Context, inv *spi.Invocation) spi.Result {
					args = inv.Args
					return spi.Result{Value: info{N: 7}, Attachments: map[string]string{"x-back": "1"}}
				})
				res := f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"orig", 2}})
				want := []any{"orig", 2}
				if tc.mode == "mutate" {
					want = []any{"mutated", 2}
				}
				if !reflect.DeepEqual(args, want) {
					t.Fatalf("F_MODE=%q %s: next got arguments %#v; want %#v", tc.mode, side, args, want)
				}
				if tc.wantErr != "" {
					if res.Err == nil || res.Err.Error() != tc.wantErr {
						t.Fatalf("F_MODE=%q %s: %+v; want %s", tc.mode, side, res, tc.wantErr)
					}
					continue
				}
				if res.Err != nil || res.Value != (info{N: 7}) || res.Attachments["x-back"] != "1" {
					t.Fatalf("F_MODE=%q %s: %+v; want next's own result", tc.mode, side, res)
				}
			}
		}
		if n := strings.Count(log.String(), "ignored"); tc.warn == "" && n != 0 || tc.warn != "" && strings.Count(log.String(), tc.warn) != 1 {
			t.Errorf("F_MODE=%q: warnings:\n%s", tc.mode, log.String())
		}
	}
}

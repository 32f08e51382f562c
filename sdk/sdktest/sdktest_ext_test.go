package sdktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRandomBalancerThroughGRPC(t *testing.T) {
	sdktest.TestLoadBalance(t, random.New())
}

func TestMemoryRegistryThroughGRPC(t *testing.T) {
	sdktest.TestRegistry(t, memory.NewBuilder(), spi.MustParse("memory://"))
}

type greeter struct{}

func (greeter) Hello(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", spi.Errorf(spi.StatusBadRequest, "greeter: empty name")
	}
	if name == "boom" {
		return "", errors.New("plain failure")
	}
	return "Hello, " + name + sdk.Attachments(ctx)["suffix"], nil
}

func (greeter) Add(a, b int) int { return a + b }

func TestServiceThroughGRPC(t *testing.T) {
	inv := sdktest.Service(t, sdk.Service{Name: "greeter.Greeter", Impl: greeter{}})
	ctx := context.Background()
	res := inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}, Attachments: map[string]string{"suffix": "!"}})
	if res.Err != nil || res.Value != "Hello, Ann!" {
		t.Fatalf("Hello(Ann) = %v, %v", res.Value, res.Err)
	}
	var sum int
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Add", Args: []any{2, 3}, Reply: &sum})
	if res.Err != nil || sum != 5 {
		t.Fatalf("Add(2,3) = %v (%v), %v", sum, res.Value, res.Err)
	}
	for _, c := range []struct {
		method string
		args   []any
		want   spi.Status
	}{
		{"Hello", []any{""}, spi.StatusBadRequest},       // *spi.Error crosses intact
		{"Hello", []any{"boom"}, spi.StatusServiceError}, // a plain error becomes SERVICE_ERROR
		{"Nope", nil, spi.StatusServiceNotFound},
		{"Hello", nil, spi.StatusBadRequest}, // wrong arity
	} {
		res := inv.Invoke(ctx, &spi.Invocation{Method: c.method, Args: c.args})
		var se *spi.Error
		if !errors.As(res.Err, &se) || se.Status != c.want {
			t.Errorf("%s%v: err %v, want status %v", c.method, c.args, res.Err, c.want)
		}
	}
	res = inv.Invoke(ctx, &spi.Invocation{Method: "Hello", Args: []any{""}})
	if res.Err.Error() != "BAD_REQUEST: greeter: empty name" {
		t.Errorf("message not intact: %q", res.Err.Error())
	}
}

// tokenFilter passes calls that carry the right token (adding an attachment)
// and short-circuits the others with a status.
type tokenFilter struct{}

func (tokenFilter) Name() string { return "acme.token" }
func (tokenFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "token", Order: -5}
}
func (tokenFilter) Build(spi.URL) (spi.Filter, error) { return tokenFilter{}, nil }
func (tokenFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	switch inv.Attachment("token") {
	case "secret":
		inv.SetAttachment("checked", inv.Method)
		return next.Invoke(ctx, inv)
	case "cached":
		return spi.Result{Value: map[string]any{"cached": true}}
	}
	return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "acme.token: bad token %q", inv.Attachment("token"))}
}

func TestFilterThroughGRPC(t *testing.T) {
	fb := sdktest.Filter(t, tokenFilter{})
	if a := fb.Activation(); a.Key != "token" || a.Order != -5 || len(a.Sides) != 1 || a.Sides[0] != spi.Provider {
		t.Fatalf("activation %+v", a)
	}
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider"))
	if err != nil {
		t.Fatal(err)
	}
	var seen *spi.Invocation
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), func(_ context.Context, inv *spi.Invocation) spi.Result {
		seen = inv
		return spi.Result{Value: "invoked in the host"}
	})
	ctx := context.Background()

	res := f.Invoke(ctx, next, &spi.Invocation{Method: "Echo", Args: []any{"x"}, Attachments: map[string]string{"token": "secret"}})
	if res.Err != nil || res.Value != "invoked in the host" || seen == nil || seen.Attachment("checked") != "Echo" || len(seen.Args) != 1 {
		t.Fatalf("pass: %+v, seen %+v", res, seen)
	}
	seen = nil
	res = f.Invoke(ctx, next, &spi.Invocation{Method: "Echo", Attachments: map[string]string{"token": "nope"}})
	if !errors.Is(res.Err, spi.ErrBadRequest) || res.Err.Error() != `BAD_REQUEST: acme.token: bad token "nope"` || seen != nil {
		t.Fatalf("short-circuit: %v (next called: %v)", res.Err, seen != nil)
	}
	res = f.Invoke(ctx, next, &spi.Invocation{Method: "Echo", Attachments: map[string]string{"token": "cached"}})
	if m, _ := res.Value.(map[string]any); res.Err != nil || m["cached"] != true || seen != nil {
		t.Fatalf("short-circuit with a value: %+v", res)
	}
}

// slowFilter sleeps its URL's "sleep" milliseconds (or until the call's
// context ends) before passing.
type slowFilter struct{ d time.Duration }

func (slowFilter) Name() string { return "acme.slow" }
func (slowFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}}
}
func (slowFilter) Build(u spi.URL) (spi.Filter, error) {
	d, err := u.Duration("sleep", 0)
	return slowFilter{d}, err
}
func (f slowFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	select {
	case <-time.After(f.d):
	case <-ctx.Done():
		return spi.Result{Err: ctx.Err()}
	}
	return next.Invoke(ctx, inv)
}

// A filter plugin gets what is left of the call's deadline, not a fixed
// second: a 1.3 s filter passes a call with 3 s left, and when the call's
// deadline passes in the plugin the provider answers SERVER_TIMEOUT, not
// SERVER_ERROR (new-user tester: cut at 1 s as SERVER_ERROR whatever the
// call's timeout).
func TestFilterPluginGetsTheCallsDeadline(t *testing.T) {
	fb := sdktest.Filter(t, slowFilter{})
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider&sleep=1300"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Value: "ok"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if res := f.Invoke(ctx, next, &spi.Invocation{Method: "Echo"}); res.Err != nil || res.Value != "ok" {
		t.Fatalf("1.3 s filter, 3 s left: %+v", res)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	res := f.Invoke(short, next, &spi.Invocation{Method: "Echo"})
	if spi.StatusOf(res.Err) != spi.StatusServerTimeout {
		t.Fatalf("1.3 s filter, 300 ms left: %v; want SERVER_TIMEOUT", res.Err)
	}
}

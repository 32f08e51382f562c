package kernel

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// errPlainFilter is the plain (non-spi.Error) error cxFilter answers with.
var errPlainFilter = errors.New("plain filter error")

// cxFilter answers by the call's "cx" attachment: "refuse", a plain error
// without calling next; "replace", next then a plain error instead of
// its result; "wrapctx", next with a context of its own; else next.
type cxFilter struct {
	name string
	side spi.Side
}

func (f cxFilter) Name() string { return f.name }
func (f cxFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{f.side}}
}
func (f cxFilter) Build(spi.URL) (spi.Filter, error) { return f, nil }

type cxCtxKey struct{}

func (f cxFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	switch inv.Attachment("cx") {
	case "refuse":
		return spi.Result{Err: errPlainFilter}
	case "replace":
		next.Invoke(ctx, inv)
		return spi.Result{Err: errors.New("replaced after the method")}
	case "wrapctx":
		return next.Invoke(context.WithValue(ctx, cxCtxKey{}, 1), inv)
	}
	return next.Invoke(ctx, inv)
}

// cxService counts its runs; Fail returns a plain error.
type cxService struct{ runs atomic.Int64 }

func (s *cxService) Fail(ctx context.Context, msg string) (string, error) {
	s.runs.Add(1)
	return "", errors.New(msg)
}

// A provider filter's plain error keeps SERVICE_ERROR but says the method
// did not run; the method's own error, also through a filter that wraps
// the context, and a filter's error after the method ran do not say so.
// A consumer filter's plain error is CLIENT_ERROR naming the filter.
func TestFilterPlainErrorStatusAndText(t *testing.T) {
	cat := testCatalogs(t)
	for _, f := range []cxFilter{{"cx.provider", spi.Provider}, {"cx.consumer", spi.Consumer}} {
		if err := cat.Filter.Register(f, extension.Bundled); err != nil {
			t.Fatal(err)
		}
	}
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := &cxService{}
	e, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/cx.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	// the consumer's filter only where it is asked for
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/cx.Svc?filter=-cx.consumer"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(r *Reference, mode string) error {
		t.Helper()
		ctx := spi.WithAttachments(ctxT(t), "cx", mode)
		return r.Call(ctx, "Fail", []any{"method failed"}, nil)
	}

	err = call(r, "refuse")
	want := `SERVICE_ERROR: kernel: cx.Svc.Fail did not run: provider filter "cx.provider" refused the call: plain filter error`
	if spi.StatusOf(err) != spi.StatusServiceError || err.Error() != want {
		t.Fatalf("provider filter's plain error: %v (%v), want %q", err, spi.StatusOf(err), want)
	}
	if n := svc.runs.Load(); n != 0 {
		t.Fatalf("the method ran %d times behind a refusing filter", n)
	}

	for _, tc := range []struct{ mode, want string }{
		{"", "SERVICE_ERROR: method failed"},
		{"wrapctx", "SERVICE_ERROR: method failed"},
		{"replace", "SERVICE_ERROR: replaced after the method"},
	} {
		before := svc.runs.Load()
		err := call(r, tc.mode)
		if spi.StatusOf(err) != spi.StatusServiceError || err.Error() != tc.want {
			t.Errorf("cx=%q: %v, want %q", tc.mode, err, tc.want)
		}
		if svc.runs.Load() != before+1 {
			t.Errorf("cx=%q: the method did not run", tc.mode)
		}
	}

	rc, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/cx.Svc?filter=cx.consumer"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	before := svc.runs.Load()
	err = call(rc, "refuse")
	var se *spi.Error
	want = `CLIENT_ERROR: kernel: call cx.Svc.Fail: consumer filter "cx.consumer": plain filter error`
	if !errors.As(err, &se) || se.Status != spi.StatusClientError || err.Error() != want || !errors.Is(err, errPlainFilter) {
		t.Fatalf("consumer filter's plain error: %v (%T), want %q wrapping it", err, err, want)
	}
	if svc.runs.Load() != before {
		t.Fatal("the method ran behind a refusing consumer filter")
	}
	if err := call(rc, "refuse"); strings.Count(err.Error(), "CLIENT_ERROR") != 1 {
		t.Fatalf("status named more than once: %v", err)
	}
}

package kernel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// errDCQuota is the plain error dcFilter refuses calls with.
var errDCQuota = errors.New("quota exceeded")

// errDCTyped is the *spi.Error dcFilter's "wrap" mode wraps.
var errDCTyped = &spi.Error{Status: spi.StatusBadRequest, Message: "no tenant", Cause: spi.ErrAccessDenied}

// dcFilter is a Go filter registered as README tells users to
// (cat.Filter.Register with an extension.Origin), switched on by a
// URL's "filter" key only. By the call's "dc" attachment when it names
// the filter and its side ("dc" = "<side>/<name>:<mode>"): "refuse", errDCQuota without
// calling next; "wrap", fmt.Errorf("auth: %w", errDCTyped) without
// calling next; "wrapnext", next, then its error wrapped
// fmt.Errorf("auth: %w", err). Else next.
type dcFilter struct {
	name        string
	perProvider bool
	side        string // set by Build: "consumer" or "provider"
}

func (f dcFilter) Name() string { return f.name }
func (f dcFilter) Activation() spi.Activation {
	return spi.Activation{PerProvider: f.perProvider}
}
func (f dcFilter) Build(u spi.URL) (spi.Filter, error) {
	f.side, _ = u.Param(spi.KeySide)
	return f, nil
}

func (f dcFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	switch me := f.side + "/" + f.name; inv.Attachment("dc") {
	case me + ":refuse":
		return spi.Result{Err: errDCQuota}
	case me + ":wrap":
		return spi.Result{Err: fmt.Errorf("auth: %w", errDCTyped)}
	case me + ":wrapnext":
		r := next.Invoke(ctx, inv)
		if r.Err != nil {
			r.Err = fmt.Errorf("auth: %w", r.Err)
		}
		return r
	}
	return next.Invoke(ctx, inv)
}

// fix-dc #1 and #2 over real TCP: a provider filter's plain refusal names
// the filter (the inner of two too: the one that did not call next), a
// consumer filter's plain error (above the cluster and per provider) names
// it, and a consumer filter's wrapper of an *spi.Error has that error's
// status and its own text, errors.Is and errors.As matching both.
func TestFilterErrorsNameTheFilter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat := testCatalogs(t)
	for _, f := range []dcFilter{{name: "acme.outer"}, {name: "acme.auth"}, {name: "acme.peer", perProvider: true}} {
		if err := cat.Filter.Register(f, extension.Origin("example.com/acme/"+f.name)); err != nil {
			t.Fatal(err)
		}
	}
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := &cxService{}
	e, err := p.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/dc.Svc?filter=acme.outer,acme.auth"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/dc.Svc?retries=0&timeout=10s&filter=acme.outer,acme.auth,acme.peer"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(mode string) error {
		return ref.Call(spi.WithAttachments(ctx, "dc", mode), "Fail", []any{"method failed"}, nil)
	}

	pref, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/dc.Svc?retries=0&timeout=10s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode   string
		status spi.Status
		text   string
		runs   int64 // the method's runs
	}{
		// provider: the filter that did not call next is named, the outer or the inner
		{"provider/acme.outer:refuse", spi.StatusServiceError, `SERVICE_ERROR: kernel: dc.Svc.Fail did not run: provider filter "acme.outer" refused the call: quota exceeded`, 0},
		{"provider/acme.auth:refuse", spi.StatusServiceError, `SERVICE_ERROR: kernel: dc.Svc.Fail did not run: provider filter "acme.auth" refused the call: quota exceeded`, 0},
		// a wrapper of an *spi.Error keeps its status and its text, the status once
		{"provider/acme.auth:wrap", spi.StatusBadRequest, "BAD_REQUEST: auth: no tenant", 0},
		{"provider/acme.auth:wrapnext", spi.StatusServiceError, "SERVICE_ERROR: auth: method failed", 1},
		// the method's own error names no filter
		{"", spi.StatusServiceError, "SERVICE_ERROR: method failed", 1},
	} {
		before := svc.runs.Load()
		err := pref.Call(spi.WithAttachments(ctx, "dc", tc.mode), "Fail", []any{"method failed"}, nil)
		if spi.StatusOf(err) != tc.status || err == nil || err.Error() != tc.text {
			t.Errorf("provider %q: %v (%v), want %q", tc.mode, err, spi.StatusOf(err), tc.text)
		}
		if n := svc.runs.Load() - before; n != tc.runs {
			t.Errorf("provider %q: the method ran %d times, want %d", tc.mode, n, tc.runs)
		}
	}

	// consumer: each filter is named (the reference's and a per-provider
	// one); the provider never sees the call
	for _, name := range []string{"acme.outer", "acme.auth", "acme.peer"} {
		before := svc.runs.Load()
		err := call("consumer/" + name + ":refuse")
		want := fmt.Sprintf(`CLIENT_ERROR: kernel: call dc.Svc.Fail: consumer filter %q: quota exceeded`, name)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusClientError || err.Error() != want || !errors.Is(err, errDCQuota) || !errors.Is(err, spi.ErrClientError) {
			t.Errorf("consumer %s: %v (%T), want %q wrapping errDCQuota", name, err, err, want)
		}
		if svc.runs.Load() != before {
			t.Errorf("consumer %s: the method ran behind a refusing consumer filter", name)
		}
	}

	// consumer: a wrapper of an *spi.Error has its status, the wrapper's
	// text with the status once, and matches both errors
	for _, tc := range []struct {
		mode   string
		status spi.Status
		text   string
		is     []error
	}{
		{"consumer/acme.auth:wrap", spi.StatusBadRequest, "BAD_REQUEST: auth: no tenant", []error{errDCTyped, spi.ErrBadRequest, spi.ErrAccessDenied}},
		{"consumer/acme.peer:wrap", spi.StatusBadRequest, "BAD_REQUEST: auth: no tenant", []error{errDCTyped, spi.ErrBadRequest, spi.ErrAccessDenied}},
		{"consumer/acme.auth:wrapnext", spi.StatusServiceError, "SERVICE_ERROR: auth: method failed", []error{spi.ErrServiceError}},
	} {
		err := call(tc.mode)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != tc.status || err.Error() != tc.text {
			t.Errorf("consumer %s: %v (%T), want %v %q", tc.mode, err, err, tc.status, tc.text)
			continue
		}
		if se.Message != tc.text[len(tc.status.String())+2:] {
			t.Errorf("consumer %s: message %q", tc.mode, se.Message)
		}
		for _, target := range tc.is {
			if !errors.Is(err, target) {
				t.Errorf("consumer %s: errors.Is(%v) false", tc.mode, target)
			}
		}
		if tc.mode == "consumer/acme.auth:wrapnext" && se.Provider != e.URL().Address() {
			t.Errorf("consumer %s: provider %q, want %s", tc.mode, se.Provider, e.URL().Address())
		}
	}
}

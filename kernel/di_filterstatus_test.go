package kernel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// diFilter refuses every call on its side with fmt.Errorf("auth: %w",
// err): a filter's wrapper of a status it chose.
type diFilter struct {
	name        string
	perProvider bool
	err         error
}

func (f diFilter) Name() string { return f.name }
func (f diFilter) Activation() spi.Activation {
	return spi.Activation{PerProvider: f.perProvider}
}
func (f diFilter) Build(spi.URL) (spi.Filter, error) { return f, nil }
func (f diFilter) Invoke(context.Context, spi.Invoker, *spi.Invocation) spi.Result {
	return spi.Result{Err: fmt.Errorf("auth: %w", f.err)}
}

// fix-di #1 and #2 over real TCP: a consumer filter's wrapper of a bare
// status sentinel (fmt.Errorf("auth: %w", spi.ErrBadRequest)) reads
// "BAD_REQUEST: auth", the status once; a per-provider filter's wrapper
// refusing on every provider of a failover reads, in each attempt's line,
// as one attempt's error does: the status first, once.
func TestFilterWrapperOfBareStatusSaysItOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat := testCatalogs(t)
	for _, f := range []diFilter{
		{name: "di.bare", err: spi.ErrBadRequest},
		{name: "di.peer", perProvider: true, err: spi.ErrServerThreadpoolExhausted},
		{name: "di.peermsg", perProvider: true, err: &spi.Error{Status: spi.StatusServerThreadpoolExhausted, Message: "no tenant slot"}},
	} {
		if err := cat.Filter.Register(f, extension.Origin("example.com/di/"+f.name)); err != nil {
			t.Fatal(err)
		}
	}
	var addrs []string
	for range 2 {
		p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
		defer p.Close()
		e, err := p.Export(ctx, &cxService{}, spi.MustParse("airnode://127.0.0.1:0/di.Svc"))
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, e.URL().Address())
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	refer := func(addr, query string) *Reference {
		ref, err := c.Refer(ctx, spi.MustParse("airnode://"+addr+"/di.Svc?timeout=10s&"+query), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}

	err := refer(addrs[0], "retries=0&filter=di.bare").Call(ctx, "Fail", []any{"x"}, nil)
	if want := "BAD_REQUEST: auth"; err == nil || err.Error() != want || spi.StatusOf(err) != spi.StatusBadRequest {
		t.Errorf("consumer filter's fmt.Errorf(\"auth: %%w\", spi.ErrBadRequest): %v, want %q", err, want)
	}

	for _, tc := range []struct{ filter, text string }{
		{"di.peer", "SERVER_THREADPOOL_EXHAUSTED: auth"},
		{"di.peermsg", "SERVER_THREADPOOL_EXHAUSTED: auth: no tenant slot"},
	} {
		// one attempt: the error as the filter's wrapper reads
		one := refer(addrs[0], "retries=0&filter="+tc.filter).Call(ctx, "Fail", []any{"x"}, nil)
		if one == nil || one.Error() != tc.text {
			t.Errorf("%s, one attempt: %v, want %q", tc.filter, one, tc.text)
		}
		// two providers, one attempt each: each line as one attempt's
		both := refer(addrs[0]+","+addrs[1], "retries=1&filter="+tc.filter).Call(ctx, "Fail", []any{"x"}, nil)
		if both == nil || spi.StatusOf(both) != spi.StatusServerThreadpoolExhausted {
			t.Fatalf("%s, two providers: %v, want SERVER_THREADPOOL_EXHAUSTED", tc.filter, both)
		}
		lines := strings.Split(both.Error(), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s, two providers: %d lines, want 3:\n%v", tc.filter, len(lines), both)
		}
		for _, l := range lines[1:] {
			if !strings.HasSuffix(l, ": "+tc.text) || strings.Count(l, "SERVER_THREADPOOL_EXHAUSTED") != 1 {
				t.Errorf("%s, two providers: line %q, want it to end in %q, the status once:\n%v", tc.filter, l, ": "+tc.text, both)
			}
		}
	}
}

// fix-di #5 over real TCP: a direct registry URL listing one provider
// twice (--registry direct://A,A, the node's registry or Refer's) is
// warned of once, as the reference's own airnode://A,A/svc is; the
// provider is one, and answers.
func TestDirectRegistryURLAddressTwiceWarns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctx, &cxService{}, spi.MustParse("airnode://127.0.0.1:0/di.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	a := e.URL().Address()
	const text = `msg="provider address listed more than once in the direct URL: it is one provider, called as one"`
	direct := spi.MustParse("direct://" + a + "," + a)
	for _, tc := range []struct {
		name      string
		opts      []Option
		u, regURL spi.URL
	}{
		{"the node's registry", []Option{WithRegistry(direct)}, spi.MustParse("airnode:///di.Svc"), spi.URL{}},
		{"Refer's registry", nil, spi.MustParse("airnode:///di.Svc"), direct},
		{"the reference's URL", nil, spi.MustParse("airnode://" + a + "," + a + "/di.Svc"), spi.URL{}},
	} {
		var logs syncBuffer
		c := NewNode(cat, append(tc.opts, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
		ref, err := c.Refer(ctx, tc.u, tc.regURL)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = ref.Call(ctx, "Fail", []any{"x"}, nil)
		if out := logs.String(); strings.Count(out, text) != 1 || !strings.Contains(out, "provider="+a+" providers=1") {
			t.Errorf("%s: want one warning naming %s:\n%s", tc.name, a, out)
		}
		if err == nil || err.Error() != "SERVICE_ERROR: x" {
			t.Errorf("%s: call: %v, want the method's SERVICE_ERROR: x", tc.name, err)
		}
		c.Close()
	}
}

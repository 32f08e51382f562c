package kernel

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// tagFilter appends its name and side to string results, and checks that
// the consumer's attachment reached the provider.
type tagFilter struct {
	name  string
	order int
}

func (f tagFilter) Name() string { return f.name }
func (f tagFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Order: f.order}
}
func (f tagFilter) Build(u spi.URL) (spi.Filter, error) {
	side, _ := u.Param(spi.KeySide)
	return tagInvoke{name: f.name, side: side}, nil
}

type tagInvoke struct{ name, side string }

func (t tagInvoke) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if t.side == string(spi.Consumer) {
		inv.SetAttachment("x-"+t.name, "set")
	} else if inv.Attachment("x-"+t.name) != "set" {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "attachment x-%s missing", t.name)}
	}
	res := next.Invoke(ctx, inv)
	if s, ok := res.Value.(string); ok {
		res.Value = s + "+" + t.side[:1] + t.name
	}
	return res
}

func TestFilterChainsBothSides(t *testing.T) {
	cat := testCatalogs(t)
	for _, f := range []tagFilter{{"a", 1}, {"b", 2}} {
		if err := cat.Filter.Register(f, extension.Bundled); err != nil {
			t.Fatal(err)
		}
	}
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	// a runs outside b on both sides: provider b, provider a, consumer b, consumer a.
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x+pb+pa+cb+ca" {
		t.Fatalf("Echo = %v, %v", v, err)
	}
	// filter=-b on the consumer removes it there only.
	r2, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?filter=-b"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Invoke(ctxT(t), "Echo", "x"); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("provider b should miss the consumer's attachment: %v", err)
	}
}

// token=true at export publishes a random token in the provider URL; a
// consumer that finds the provider through the registry sends it; a direct
// consumer must give it.
func TestTokenFromRegistry(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://tokens")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=true"))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := e.URL().Param("token")
	if len(tok) != 32 {
		t.Fatalf("token %q, want 32 hex characters", tok)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("through the registry: %v, %v", v, err)
	}
	direct, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Invoke(ctxT(t), "Echo", "x"); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("direct without token: %v", err)
	}
	withTok, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?token="+tok), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withTok.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatalf("direct with token: %v", err)
	}
}

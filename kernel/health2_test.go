package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// healthCheck calls airnode.Health.Check(args...) through r and returns
// the status and the answer's reason attachment.
func healthCheck(t *testing.T, r *Reference, args ...any) (string, string) {
	t.Helper()
	var att map[string]string
	ctx := spi.ReceiveAttachments(ctxT(t), &att)
	v, err := r.Invoke(ctx, HealthCheck, args...)
	if err != nil {
		t.Fatalf("Check(%v): %v", args, err)
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("Check(%v) = %T %v; want a status string", args, v, v)
	}
	return s, att[HealthReasonAttachment]
}

// healthSetup makes a provider node with opts exporting demo.Echo at
// URL export, and a consumer node whose reference r is to the health
// service at the provider's address by its URL (a direct consumer: no
// registry). The consumer closes at cleanup; closing p is the caller's.
func healthSetup(t *testing.T, cat *extension.Catalogs, export string, opts ...Option) (p *Node, e *Exporter, c *Node, r *Reference) {
	t.Helper()
	p = NewNode(cat, append([]Option{WithLogger(quiet)}, opts...)...)
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse(export))
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	c = NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { c.Close() })
	if r, err = c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/"+HealthService+"?retries=0"), spi.URL{}); err != nil {
		p.Close()
		t.Fatal(err)
	}
	return p, e, c, r
}

// Every provider address serves airnode.Health over real TCP: SERVING
// for an exported service, SERVICE_UNKNOWN for another, the node ("")
// as its readiness says, NOT_SERVING with the reason while the export is
// marked not serving; gRPC's request shapes are taken. It is not
// registered, has no provider metrics series, and a wrong method or
// argument is refused naming what is allowed.
func TestHealthServiceCheck(t *testing.T) {
	cat := testCatalogs(t)
	b, err := cat.Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	mreg, _ := metrics.RegistryOf(b)
	regURL := spi.MustParse("memory://health2check")
	health := metrics.NewHealth() // starting
	p, e, c, r := healthSetup(t, cat, "airnode://127.0.0.1:0/demo.Echo", WithRegistry(regURL), WithShutdownWait(0), WithHealth(health))
	defer p.Close()

	for _, arg := range []any{"demo.Echo", map[string]any{"service": "demo.Echo"}, []any{"demo.Echo"}} {
		if st, why := healthCheck(t, r, arg); st != HealthServing || why != "" {
			t.Errorf("Check(%v) = %s %q; want SERVING", arg, st, why)
		}
	}
	if st, why := healthCheck(t, r, "nope.Svc"); st != HealthServiceUnknown || !strings.Contains(why, "nope.Svc is not exported on "+e.URL().Address()) {
		t.Errorf("Check(nope.Svc) = %s %q; want SERVICE_UNKNOWN naming the address", st, why)
	}
	// nu83 #1: a misspelt service gets the did-you-mean a call gets
	if st, why := healthCheck(t, r, "demo.Echoo"); st != HealthServiceUnknown || !strings.HasSuffix(why, `is not exported on `+e.URL().Address()+` (exported here: demo.Echo); did you mean "demo.Echo"?`) {
		t.Errorf("Check(demo.Echoo) = %s %q; want SERVICE_UNKNOWN naming demo.Echo as meant", st, why)
	}
	if st, _ := healthCheck(t, r, "g/demo.Echo:2.0"); st != HealthServiceUnknown {
		t.Errorf("Check of another group and version = %s; want SERVICE_UNKNOWN", st)
	}
	// the node as a whole: its readiness (starting until the program says serving)
	if st, why := healthCheck(t, r, ""); st != HealthNotServing || why != "starting" {
		t.Errorf("Check(\"\") while starting = %s %q; want NOT_SERVING \"starting\"", st, why)
	}
	health.SetState(metrics.NodeServing, "")
	if st, _ := healthCheck(t, r, ""); st != HealthServing {
		t.Errorf("Check(\"\") serving = %s", st)
	}
	if st, _ := healthCheck(t, r); st != HealthServing {
		t.Errorf("Check() (no argument: the node) = %s", st)
	}

	e.SetServing(false, `plugin "acme.authz" restarting`)
	if st, why := healthCheck(t, r, "demo.Echo"); st != HealthNotServing || why != `plugin "acme.authz" restarting` {
		t.Errorf("Check after SetServing(false) = %s %q", st, why)
	}
	e.SetServing(true, "")
	if st, _ := healthCheck(t, r, "demo.Echo"); st != HealthServing {
		t.Errorf("Check after SetServing(true) = %s", st)
	}

	// not registered: a registry consumer sees demo.Echo only
	rb, _ := cat.Registry.Get("memory")
	reg, err := rb.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if urls, _ := reg.Lookup(ctxT(t), spi.MustParse("airnode:///"+HealthService+"?side=consumer")); len(urls) != 0 {
		t.Errorf("registry lists %s: %v", HealthService, urls)
	}
	if urls, _ := reg.Lookup(ctxT(t), spi.MustParse("airnode:///demo.Echo?side=consumer")); len(urls) != 1 {
		t.Errorf("registry lists %d providers of demo.Echo; want 1", len(urls))
	}
	if _, ok := mreg.Lookup(spi.Provider, HealthService, HealthCheck); ok {
		t.Errorf("the provider has a metrics series for %s.%s; want none (no filters)", HealthService, HealthCheck)
	}
	// the hint of a service not exported does not list the health service
	var out any
	dr, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/nope.Svc?retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dr.Call(ctxT(t), "X", nil, &out); spi.StatusOf(err) != spi.StatusServiceNotFound || strings.Contains(err.Error(), HealthService) {
		t.Errorf("call of a service not exported: %v; want SERVICE_NOT_FOUND listing demo.Echo only", err)
	}

	_, err = r.Invoke(ctxT(t), "Watch", "demo.Echo")
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "(methods: Check)") {
		t.Errorf("Watch: %v; want SERVICE_NOT_FOUND naming Check", err)
	}
	_, err = r.Invoke(ctxT(t), HealthCheck, 5)
	if spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "want a service key string") {
		t.Errorf("Check(5): %v; want BAD_REQUEST saying what is allowed", err)
	}
	_, err = r.Invoke(ctxT(t), HealthCheck, "a", "b")
	if spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "takes one argument") {
		t.Errorf("Check(a, b): %v; want BAD_REQUEST", err)
	}
}

// From the start of Shutdown (during its wait, while demo.Echo is still
// served) Check answers NOT_SERVING for the node and the service.
func TestHealthServiceDraining(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("memory://health2drain")
	const wait = 1500 * time.Millisecond
	p, e, c, r := healthSetup(t, cat, "airnode://127.0.0.1:0/demo.Echo", WithRegistry(regURL), WithShutdownWait(wait))
	echo, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := healthCheck(t, r, "demo.Echo"); st != HealthServing {
		t.Fatalf("before Shutdown: %s", st)
	}
	if st, _ := healthCheck(t, r, ""); st != HealthServing {
		t.Fatalf("node before Shutdown (no readiness given): %s", st)
	}
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(context.Background()) }()
	eventually(t, "Check answering NOT_SERVING", func() bool {
		st, _ := healthCheck(t, r, "demo.Echo")
		return st == HealthNotServing
	})
	for _, key := range []string{"demo.Echo", ""} {
		if st, why := healthCheck(t, r, key); st != HealthNotServing || !strings.HasPrefix(why, "draining") {
			t.Errorf("Check(%q) during the drain = %s %q; want NOT_SERVING draining", key, st, why)
		}
	}
	if st, _ := healthCheck(t, r, "nope.Svc"); st != HealthServiceUnknown {
		t.Errorf("Check(nope.Svc) during the drain = %s; want SERVICE_UNKNOWN", st)
	}
	var out any
	if err := echo.Call(ctxT(t), "Echo", []any{"still served"}, &out); err != nil {
		t.Errorf("demo.Echo during the wait: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) before its wait", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// health.service=false turns the service off on the address; another
// value on the same address is refused (a later export that does not
// set it takes the address's), as for every per-address key,
// and a malformed one names the key and the values allowed.
func TestHealthServiceOff(t *testing.T) {
	cat := testCatalogs(t)
	p, e, _, r := healthSetup(t, cat, "airnode://127.0.0.1:0/demo.Echo?health.service=false", WithShutdownWait(0))
	defer p.Close()
	if _, err := r.Invoke(ctxT(t), HealthCheck, "demo.Echo"); spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Errorf("Check with health.service=false: %v; want SERVICE_NOT_FOUND", err)
	}
	_, err := p.Export(ctxT(t), demo.New("q", 100), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Other?health.service=true"))
	if err == nil || !strings.Contains(err.Error(), `"health.service"`) {
		t.Errorf("export on the same address with health.service=true: %v; want refused naming the key", err)
	}
	_, err = p.Export(ctxT(t), demo.New("q", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?health.service=maybe"))
	if err == nil || !strings.Contains(err.Error(), `health.service`) || !strings.Contains(err.Error(), "false") {
		t.Errorf("health.service=maybe: %v; want an error naming the key and the values", err)
	}
	// the default spelled out shares an address with the default
	q := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer q.Close()
	e1, err := q.Export(ctxT(t), demo.New("q", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Export(ctxT(t), demo.New("q", 100), spi.MustParse("airnode://"+e1.URL().Address()+"/demo.Other?health.service=true")); err != nil {
		t.Errorf("health.service=true beside the default: %v", err)
	}
}

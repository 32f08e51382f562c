package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// TestT72_ProvidersGaugeIsZeroWhenNoneListed (tester72 #5): when a
// consumer's only provider left the registry, every
// airnode_consumer_provider_* series vanished, so an alert needed
// absent() and a failure rate. Real nodes on loopback, a file registry:
// airnode_consumer_providers{service,state} counts the reference's
// providers by state (1 available), and once the provider has shut down
// the three states are still there, at 0, so sum by (service) == 0 works.
func TestT72_ProvidersGaugeIsZeroWhenNoneListed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reg := spi.MustParse("file://" + t.TempDir())
	p := quietNode(t, kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	if _, err := p.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/t72.Svc?methods=Do"),
		spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: inv.Args[0]} })); err != nil {
		t.Fatal(err)
	}
	c := quietNode(t, kernel.WithRegistry(reg))
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///t72.Svc"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metrics.Listen("127.0.0.1:0", registry(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	state := func(body, s string) float64 {
		return sampleOf(body, `airnode_consumer_providers\{service="t72\.Svc",state="`+s+`"\}`)
	}
	var body string
	for {
		body = scrape(t, srv.Addr().String())
		if state(body, "available") == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the provider was never counted available:\n%s", grepLines(body, "airnode_consumer_provider"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u, e := state(body, "unavailable"), state(body, "ejected"); u != 0 || e != 0 {
		t.Errorf("one available provider: unavailable %v, ejected %v; want 0, 0\n%s", u, e, grepLines(body, "airnode_consumer_providers"))
	}
	if _, err := ref.Invoke(ctx, "Do", 1); err != nil {
		t.Fatal(err)
	}

	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		body = scrape(t, srv.Addr().String())
		if state(body, "available") == 0 && state(body, "unavailable") == 0 && state(body, "ejected") == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("after the provider left, want the three states at 0 (not absent, -1):\n%s", grepLines(body, "airnode_consumer_provider"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(body, "# TYPE airnode_consumer_providers gauge\n") {
		t.Errorf("airnode_consumer_providers is not a gauge:\n%s", grepLines(body, "airnode_consumer_providers"))
	}
	t.Logf("after the provider left:\n%s", grepLines(body, "airnode_consumer_providers{"))

	// A closed reference leaves the family.
	if err := ref.Close(); err != nil {
		t.Fatal(err)
	}
	if body = scrape(t, srv.Addr().String()); state(body, "available") != -1 {
		t.Errorf("a closed reference is still counted:\n%s", grepLines(body, "airnode_consumer_providers"))
	}
}

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

// tester81 #8: no metric counted failover's retries nor the retry
// budget's refusals. A real consumer on loopback TCP with retries=1 and
// retry.tokens=4 calls a provider whose pool is always full
// (SERVER_THREADPOOL_EXHAUSTED): the first call takes a token (4 -> 3),
// retries (made) and takes another (-> 2); the next two find 2 and then 1
// token left, not above half, and are refused. The consumer's /metrics,
// scraped over HTTP, says made 1, budget_refused 2.
func TestAU_RetriesCountedInMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reg := spi.MustParse("file://" + t.TempDir())
	p := quietNode(t, kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	if _, err := p.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/au.Retried?methods=Do"),
		spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Err: spi.Errorf(spi.StatusServerThreadpoolExhausted, "au: pool full")}
		})); err != nil {
		t.Fatal(err)
	}
	c := quietNode(t)
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///au.Retried?retries=1&retry.tokens=4&outlier.consecutive=0"), reg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metrics.Listen("127.0.0.1:0", registry(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for len(ref.Providers()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the provider never showed up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := range 3 {
		if _, err := ref.Invoke(ctx, "Do"); spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted {
			t.Fatalf("call %d: %v, want SERVER_THREADPOOL_EXHAUSTED", i+1, err)
		}
	}
	body := scrape(t, srv.Addr().String())
	for outcome, want := range map[string]float64{"made": 1, "budget_refused": 2} {
		if got := sampleOf(body, `airnode_consumer_retries_total\{outcome="`+outcome+`",service="au.Retried"\}`); got != want {
			t.Errorf("airnode_consumer_retries_total{outcome=%q,service=\"au.Retried\"} = %v, want %v", outcome, got, want)
		}
	}
	if !strings.Contains(body, "# HELP airnode_consumer_retries_total Retries of the failover cluster") || !strings.Contains(body, "# TYPE airnode_consumer_retries_total counter") {
		t.Errorf("no HELP and TYPE counter for airnode_consumer_retries_total in:\n%s", body)
	}
}

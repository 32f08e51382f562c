package metrics_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// F12 (tester nu33): a consumer's metrics named no provider, and a
// provider's failures were lifetime totals only. Real nodes on loopback,
// a file registry: a consumer of two providers, one answering
// SERVER_ERROR while its fault lasts. The consumer's /metrics, scraped
// over HTTP, names the bad provider (its failures, its ejection); the
// provider's /stats shows failures in the last 10 s, back to 0 once the
// fault has stopped for that long while the lifetime total stays; a
// provider that leaves the registry leaves the consumer's metrics.
func TestF12_ConsumerMetricsNameTheBadProvider(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	reg := spi.MustParse("file://" + t.TempDir())
	// port 0 everywhere: a fixed port can be another test's ephemeral one
	var good, bad string
	var faulty atomic.Bool
	faulty.Store(true)
	provider := func(addr *string, fails bool) *kernel.Node {
		n := quietNode(t, kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
		exp, err := n.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/f12.Svc?methods=Do"),
			spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result {
				if fails && faulty.Load() {
					return spi.Result{Err: spi.Errorf(spi.StatusServerError, "f12: injected fault")}
				}
				return spi.Result{Value: inv.Args[0]}
			}))
		if err != nil {
			t.Fatal(err)
		}
		*addr = exp.URL().Address()
		return n
	}
	provider(&good, false)
	pbad := provider(&bad, true)
	pstats, err := metrics.Listen("127.0.0.1:0", registry(t, pbad))
	if err != nil {
		t.Fatal(err)
	}
	defer pstats.Close()

	c := quietNode(t, kernel.WithRegistry(reg))
	ref, err := c.Refer(ctx, spi.MustParse("airnode:///f12.Svc?retries=0&outlier.ejection=8s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := metrics.Listen("127.0.0.1:0", registry(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	for len(ref.Providers()) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the consumer never had both providers available")
		}
		time.Sleep(10 * time.Millisecond)
	}

	const calls = 200
	var failed int
	for i := range calls {
		if _, err := ref.Invoke(ctx, "Do", i); err != nil {
			if spi.StatusOf(err) != spi.StatusServerError {
				t.Fatalf("call %d: %v; want OK or SERVER_ERROR", i, err)
			}
			failed++
		}
	}
	body := scrape(t, cm.Addr().String())
	// Failures are by status: SERVER_ERROR only, none on the good provider
	// (no sample before a provider's first failure).
	gc, gf := sample(body, "airnode_consumer_provider_calls_total", good), failuresSample(body, good, "SERVER_ERROR")
	bc, bf := sample(body, "airnode_consumer_provider_calls_total", bad), failuresSample(body, bad, "SERVER_ERROR")
	t.Logf("good %s: %v calls, %v failed; bad %s: %v calls, %v failed; the caller saw %d of %d fail", good, gc, gf, bad, bc, bf, failed, calls)
	if n := strings.Count(body, "\nairnode_consumer_provider_failures_total{"); gc+bc != calls || gf != -1 || bf != float64(failed) || bc != bf || bf < 5 || n != 1 {
		t.Errorf("per-provider counts: good %v/%v, bad %v/%v failed; want %d calls in all, the %d failures (at least 5) all on %s and all its calls failed\n%s",
			gf, gc, bf, bc, calls, failed, bad, grepLines(body, "airnode_consumer_provider_"))
	}
	// Five SERVER_ERRORs in a row eject it (outlier.consecutive), for 8 s.
	if e, a := sample(body, "airnode_consumer_provider_ejected", bad), sample(body, "airnode_consumer_provider_available", bad); e != 1 || a != 0 {
		t.Errorf("bad provider: ejected %v, available %v; want 1, 0", e, a)
	}
	if e, a := sample(body, "airnode_consumer_provider_ejected", good), sample(body, "airnode_consumer_provider_available", good); e != 0 || a != 1 {
		t.Errorf("good provider: ejected %v, available %v; want 0, 1", e, a)
	}
	if m := sample(body, "airnode_consumer_provider_mean_response_seconds", good); m <= 0 || m > 1 {
		t.Errorf("good provider's mean response %v s: want more than 0, under 1 s", m)
	}
	if !strings.Contains(body, "# TYPE airnode_consumer_provider_calls_total counter") || !strings.Contains(body, "# TYPE airnode_consumer_provider_in_flight gauge") {
		t.Errorf("families' types:\n%s", grepLines(body, "# TYPE airnode_consumer_provider_"))
	}
	text := get(t, "http://"+cm.Addr().String()+"/stats?format=text")
	t.Logf("consumer's /stats?format=text:\n%s", text)
	if !lineWith(text, "f12.Svc", bad, strconv.Itoa(int(bc)), strconv.Itoa(int(bf)), "100.00%", "ejected") ||
		!lineWith(text, "f12.Svc", good, strconv.Itoa(int(gc)), "0", "0.00%", "available") {
		t.Errorf("/stats text lacks the provider lines:\n%s", text)
	}
	if !lineWith(text, "f12.Svc", bad, "SERVER_ERROR="+strconv.Itoa(int(bf))) {
		t.Errorf("/stats text: the bad provider's line does not split its failures by status:\n%s", text)
	}
	// The JSON says the same: failures by status, and mean_ms null for
	// the provider with no successful call (the table's "-"), not 0.
	var raw struct {
		Providers []map[string]any `json:"providers"`
	}
	if err := json.Unmarshal([]byte(get(t, "http://"+cm.Addr().String()+"/stats")), &raw); err != nil {
		t.Fatal(err)
	}
	for _, p := range raw.Providers {
		mean, hasMean := p["mean_ms"]
		byStatus, _ := p["failures_by_status"].(map[string]any)
		switch p["provider"] {
		case bad:
			if !hasMean || mean != nil || len(byStatus) != 1 || byStatus["SERVER_ERROR"] != bf {
				t.Errorf("/stats bad provider %v: want mean_ms null and failures_by_status {SERVER_ERROR: %v}", p, bf)
			}
		case good:
			if m, ok := mean.(float64); !ok || m <= 0 || byStatus == nil || len(byStatus) != 0 {
				t.Errorf("/stats good provider %v: want a mean_ms above 0 and failures_by_status {}", p)
			}
		}
	}
	if len(raw.Providers) != 2 {
		t.Errorf("/stats providers %v: want the two", raw.Providers)
	}

	// The provider's recent failures: more than 0 now; back to 0 within
	// the window (10 s) once the fault has stopped, with calls going on
	// (after the 8 s ejection), while the total stays.
	row := providerRow(t, ctx, pstats.Addr().String())
	if row.RecentFailures <= 0 || row.Failures != int64(bf) {
		t.Fatalf("bad provider's row %+v: want recent failures > 0 and %v failures", row, bf)
	}
	faulty.Store(false)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the consumer's traffic goes on
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			_, _ = ref.Invoke(ctx, "Do", i)
		}
	}()
	stopped := time.Now()
	for {
		row = providerRow(t, ctx, pstats.Addr().String())
		if row.RecentFailures == 0 && row.RecentTPS > 0 {
			break
		}
		if time.Since(stopped) > 40*time.Second {
			t.Fatalf("40 s after the fault stopped, the provider's row %+v: want recent failures 0 with calls going on", row)
		}
		time.Sleep(200 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("recent failures back to 0 %v after the fault stopped (window %v s); row %+v", time.Since(stopped).Round(100*time.Millisecond), row.RecentWindowSeconds, row)
	if row.Failures != int64(bf) {
		t.Errorf("the provider's total failures %d: want %v still", row.Failures, bf)
	}
	if st := get(t, "http://"+pstats.Addr().String()+"/stats?format=text"); !strings.Contains(st, "FAIL/10s") {
		t.Errorf("provider's table has no FAIL/10s column:\n%s", st)
	}

	// A provider that leaves the directory leaves the metrics.
	if err := pbad.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		body = scrape(t, cm.Addr().String())
		if !strings.Contains(body, `provider="`+bad+`"`) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the departed provider is still in the consumer's metrics:\n%s", grepLines(body, bad))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sample(body, "airnode_consumer_provider_calls_total", good) < gc {
		t.Errorf("the remaining provider left the metrics too:\n%s", grepLines(body, "airnode_consumer_provider_"))
	}
	// After the consumer's Shutdown, its registry reads no node.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := registry(t, c).Providers(); got != nil {
		t.Errorf("providers after the consumer's shutdown: %+v", got)
	}
}

// scrape returns addr's /metrics.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	return get(t, "http://"+addr+"/metrics")
}

// sample returns the value of family{provider=addr,service="f12.Svc"} in
// an exposition, -1 when absent.
func sample(body, family, addr string) float64 {
	return sampleOf(body, family+`\{provider="`+regexp.QuoteMeta(addr)+`",service="f12.Svc"\}`)
}

// sampleOf returns the value of the sample whose name and labels match
// the regular expression series, -1 when absent.
func sampleOf(body, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + series + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// failuresSample returns the value of airnode_consumer_provider_failures_total
// of provider addr of f12.Svc and status, or -1 when it has none.
func failuresSample(body, addr, status string) float64 {
	return sampleOf(body, `airnode_consumer_provider_failures_total\{provider="`+regexp.QuoteMeta(addr)+`",service="f12.Svc",status="`+status+`"\}`)
}

// lineWith reports whether a line of text starts with the fields
// want[0] and want[1] and has each of the others among its fields (a
// table row).
func lineWith(text string, want ...string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(l)
		if len(f) < len(want) {
			continue
		}
		ok := true
		for i, w := range want[:2] {
			ok = ok && f[i] == w
		}
		for _, w := range want[2:] {
			ok = ok && slices.Contains(f[2:], w)
		}
		if ok {
			return true
		}
	}
	return false
}

// providerRow returns the provider row of f12.Svc's Do from addr's /stats.
func providerRow(t *testing.T, ctx context.Context, addr string) metrics.MethodStats {
	t.Helper()
	rep, err := metrics.Fetch(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Methods {
		if m.Side == spi.Provider && m.Service == "f12.Svc" && m.Method == "Do" {
			return m
		}
	}
	t.Fatalf("no provider row for f12.Svc Do in %+v", rep.Methods)
	return metrics.MethodStats{}
}

package metrics_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// F6 (tester nu53, findings 2 and 4): a provider counted as OK a call
// whose result was ready after its consumer's deadline (the consumer got
// SERVER_TIMEOUT), and the consumer's per-provider failures had no
// status (a threadpool refusal and a timeout looked alike). Real nodes on
// loopback: a provider of Fast (answers at once) and Slow (sleeps 1 s,
// ignoring its context) with executes=1, a consumer calling Slow with a
// 200 ms timeout and no retry, and, while a late Slow runs, a second Slow
// that the provider refuses (SERVER_THREADPOOL_EXHAUSTED).
func TestF6_LateCallsAndProviderFailuresByStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	p := quietNode(t, kernel.WithShutdownWait(0))
	access := filepath.Join(t.TempDir(), "access.log")
	exp, err := p.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:0/f6.Svc?methods=Fast,Slow&executes=1&accesslog="+access),
		spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result {
			if inv.Method == "Slow" {
				time.Sleep(time.Second) // past the consumer's deadline, its context ignored
			}
			return spi.Result{Value: "done"}
		}))
	if err != nil {
		t.Fatal(err)
	}
	addr := exp.URL().Address()
	preg := registry(t, p)

	c := quietNode(t)
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+addr+"/f6.Svc?retries=0&timeout=10s&methods.Slow.timeout=200ms&outlier.consecutive=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	creg := registry(t, c)

	const rounds = 2
	for i := range 4 {
		if _, err := ref.Invoke(ctx, "Fast"); err != nil {
			t.Fatalf("Fast %d: %v", i, err)
		}
	}
	for i := range rounds {
		for { // the previous round's late Slow has finished on the provider
			if st, _ := preg.Lookup(spi.Provider, "f6.Svc", "Slow"); st.InFlight == 0 {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the provider's Slow never finished")
			}
			time.Sleep(5 * time.Millisecond)
		}
		var wg sync.WaitGroup
		var lateErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, lateErr = ref.Invoke(ctx, "Slow")
		}()
		for { // the late Slow holds the provider's one execution of Slow
			if st, ok := preg.Lookup(spi.Provider, "f6.Svc", "Slow"); ok && st.InFlight == 1 {
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the first Slow never reached the provider")
			}
			time.Sleep(5 * time.Millisecond)
		}
		_, err := ref.Invoke(ctx, "Slow")
		if st := spi.StatusOf(err); st != spi.StatusServerThreadpoolExhausted {
			t.Fatalf("round %d: the second Slow: %v; want SERVER_THREADPOOL_EXHAUSTED (executes=1)", i, err)
		}
		wg.Wait()
		if st := spi.StatusOf(lateErr); st != spi.StatusServerTimeout {
			t.Fatalf("round %d: the late Slow: %v; want SERVER_TIMEOUT", i, lateErr)
		}
	}

	// The provider finishes the late calls about 800 ms after their
	// consumer gave up on them.
	var slow metrics.MethodStats
	for {
		st, ok := preg.Lookup(spi.Provider, "f6.Svc", "Slow")
		if ok && st.Count == 2*rounds && st.InFlight == 0 {
			slow = st
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the provider's Slow row never reached %d calls: %+v", 2*rounds, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("provider's Slow: %+v", slow)
	want := map[string]int64{"SERVER_TIMEOUT": rounds, "SERVER_THREADPOOL_EXHAUSTED": rounds}
	if slow.Failures != 2*rounds || slow.Late != rounds || slow.SuccessRate != 0 || !sameCounts(slow.FailuresByStatus, want) {
		t.Errorf("provider's Slow row: %d failures %v, late %d, success %.2f; want %d failures %v, %d late, success 0 (what the consumer saw)",
			slow.Failures, slow.FailuresByStatus, slow.Late, slow.SuccessRate, 2*rounds, want, rounds)
	}
	if fast, _ := preg.Lookup(spi.Provider, "f6.Svc", "Fast"); fast.Count != 4 || fast.Failures != 0 || fast.Late != 0 {
		t.Errorf("provider's Fast row %+v: want 4 calls, no failure, none late", fast)
	}
	// The consumer saw the same, and its provider row says by status.
	if cs, _ := creg.Lookup(spi.Consumer, "f6.Svc", "Slow"); !sameCounts(cs.FailuresByStatus, want) || cs.Late != 0 {
		t.Errorf("consumer's Slow row: %v, late %d; want %v, late 0 (late is the provider's count)", cs.FailuresByStatus, cs.Late, want)
	}
	rows := creg.Providers()
	if len(rows) != 1 || rows[0].Provider != addr || rows[0].Calls != 4+2*rounds || rows[0].Failures != 2*rounds ||
		!sameCounts(rows[0].FailuresByStatus, want) || rows[0].MeanMillis <= 0 {
		t.Errorf("consumer's provider rows %+v: want one for %s, %d calls, failures %v, a mean of the Fast calls", rows, addr, 4+2*rounds, want)
	}

	// Over HTTP: the provider's series and the consumer's per-provider
	// series carry the status.
	ps, err := metrics.Listen("127.0.0.1:0", preg)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	cs, err := metrics.Listen("127.0.0.1:0", creg)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	pbody, cbody := scrape(t, ps.Addr().String()), scrape(t, cs.Addr().String())
	for _, l := range []string{
		`airnode_call_failures_total{method="Slow",service="f6.Svc",side="provider",status="SERVER_TIMEOUT"} 2`,
		`airnode_call_failures_total{method="Slow",service="f6.Svc",side="provider",status="SERVER_THREADPOOL_EXHAUSTED"} 2`,
	} {
		if !strings.Contains(pbody, "\n"+l+"\n") {
			t.Errorf("provider's /metrics lacks %s:\n%s", l, grepLines(pbody, "airnode_call_failures_total"))
		}
	}
	for _, st := range []string{"SERVER_TIMEOUT", "SERVER_THREADPOOL_EXHAUSTED"} {
		l := `airnode_consumer_provider_failures_total{provider="` + addr + `",service="f6.Svc",status="` + st + `"} 2`
		if !strings.Contains(cbody, "\n"+l+"\n") {
			t.Errorf("consumer's /metrics lacks %s:\n%s", l, grepLines(cbody, "airnode_consumer_provider_failures_total"))
		}
	}
	rep, err := metrics.Fetch(ctx, ps.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Methods {
		if m.Method == "Slow" && m.Late != rounds {
			t.Errorf("provider's /stats Slow row: late %d; want %d", m.Late, rounds)
		}
	}
	if js := get(t, "http://"+ps.Addr().String()+"/stats"); !regexp.MustCompile(`"late":\s*2`).MatchString(js) {
		t.Errorf("provider's /stats JSON has no \"late\": 2:\n%s", js)
	}
	// The provider's access log says the same as its metrics.
	b, err := os.ReadFile(access)
	if err != nil {
		t.Fatal(err)
	}
	var lateLines, okSlow int
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(l, "method=Slow") && strings.Contains(l, "status=SERVER_TIMEOUT") && strings.Contains(l, "late=true") {
			lateLines++
		}
		if strings.Contains(l, "method=Slow") && strings.Contains(l, "status=OK") {
			okSlow++
		}
	}
	if lateLines != rounds || okSlow != 0 {
		t.Errorf("provider's access log: %d Slow lines status=SERVER_TIMEOUT late=true, %d OK; want %d and 0:\n%s", lateLines, okSlow, rounds, b)
	}
}

// sameCounts reports whether got holds exactly want.
func sameCounts(got, want map[string]int64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

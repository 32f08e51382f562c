package integration

import (
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// counterValue reads one unlabelled series from a /metrics body.
func counterValue(t *testing.T, body, name string) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics lacks %s", name)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// tester33 F3, F8: a provider with threads=1 whose one thread is held by
// a Sleep refuses thousands of Echo calls; it counts them in
// airnode_threads_rejections_total (not executelimit's counter) and says
// so in its log at Warn, rate-bounded: a dozen lines naming the limit,
// the service and method, with suppressed and in_burst adding up to the
// calls refused.
func TestOps4ThreadsRefusalsCountedAndLogged(t *testing.T) {
	var logs logbuf.Buffer
	pn := kernel.NewNode(catalogs(t), kernel.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = pn.Close() })
	e, err := pn.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?threads=1"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metrics.Listen("127.0.0.1:0", registryOf(t, pn))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	scrape := func() string { return get(t, "http://"+srv.Addr().String()+"/metrics") }
	before := scrape()
	r := refer(t, newNode(t), e.URL().Address(), "timeout=5s&cluster=failfast") // one attempt per call
	ctx := ctxT(t)
	held := make(chan error, 1)
	go func() { _, err := r.Invoke(ctx, "Sleep", 1500); held <- err }()
	time.Sleep(200 * time.Millisecond) // the Sleep holds the thread

	var other sync.Map
	var wg sync.WaitGroup
	var total [8]int
	stop := time.Now().Add(time.Second)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if _, err := r.Invoke(ctx, "Echo", "x"); errors.Is(err, spi.ErrServerThreadpoolExhausted) {
					total[g]++
				} else {
					other.Store(g, err)
				}
			}
		}()
	}
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatalf("the Sleep holding the thread: %v", err)
	}
	other.Range(func(_, v any) bool { t.Errorf("an Echo call was not refused: %v", v); return false })
	n := 0
	for _, c := range total {
		n += c
	}
	if n < 100 {
		t.Fatalf("only %d calls refused in 1 s; the test needs a burst", n)
	}
	after := scrape()
	if d := counterValue(t, after, "airnode_threads_rejections_total") - counterValue(t, before, "airnode_threads_rejections_total"); d != int64(n) {
		t.Errorf("airnode_threads_rejections_total grew by %d, want the %d refusals", d, n)
	}
	if d := counterValue(t, after, "airnode_executes_rejections_total") - counterValue(t, before, "airnode_executes_rejections_total"); d != 0 {
		t.Errorf("airnode_executes_rejections_total grew by %d: threadlimit's refusals counted as executelimit's", d)
	}
	if !strings.Contains(after, "# HELP airnode_threads_rejections_total Calls refused by threadlimit") {
		t.Error("/metrics: airnode_threads_rejections_total's help does not name threadlimit")
	}

	lines, last, err := logbuf.Burst(logs.String(), "refusing calls at its limit (SERVER_THREADPOOL_EXHAUSTED)\" component=threadlimit")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) > 13 || last > int64(n) {
		t.Fatalf("%d refusal lines, last in_burst %d, for %d refusals; want at most 13 (first, doublings to 1,024, one per 10 s)", len(lines), last, n)
	}
	for _, l := range lines {
		for _, want := range []string{"level=WARN", `limit="threads=1"`, "service=demo.Echo", "method=Echo", "provider=" + e.URL().Address(), "refused="} {
			if !strings.Contains(l, want) {
				t.Errorf("line %q lacks %q", l, want)
			}
		}
	}
	t.Logf("%d refusals, %d lines, metric %d; last: %s", n, len(lines), counterValue(t, after, "airnode_threads_rejections_total"), lines[len(lines)-1])
}

// tester33 F8: executelimit's refusals are logged at Warn too, naming
// executes=N and the method, with the same rate bound, and counted in
// airnode_executes_rejections_total (its own counter).
func TestOps4ExecutesRefusalsLogged(t *testing.T) {
	var logs logbuf.Buffer
	pn := kernel.NewNode(catalogs(t), kernel.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = pn.Close() })
	e, err := pn.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?methods.Sleep.executes=1"))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, newNode(t), e.URL().Address(), "timeout=5s&cluster=failfast")
	ctx := ctxT(t)
	held := make(chan error, 1)
	go func() { _, err := r.Invoke(ctx, "Sleep", 1000); held <- err }()
	time.Sleep(200 * time.Millisecond)
	for i := range 5 {
		if _, err := r.Invoke(ctx, "Sleep", 1); !errors.Is(err, spi.ErrServerThreadpoolExhausted) {
			t.Fatalf("call %d: %v, want SERVER_THREADPOOL_EXHAUSTED", i, err)
		}
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	lines, last, err := logbuf.Burst(logs.String(), "refusing calls at its limit (SERVER_THREADPOOL_EXHAUSTED)\" component=executelimit")
	if err != nil {
		t.Fatal(err)
	}
	// 5 refusals: lines for the 1st, 2nd and 4th; the 5th is left out
	if len(lines) != 3 || last != 4 {
		t.Errorf("%d lines, last in_burst %d; want 3 and 4:\n%s", len(lines), last, strings.Join(lines, "\n"))
	}
	for _, want := range []string{"level=WARN", `limit="executes=1"`, "service=demo.Echo", "method=Sleep", "refused=4"} {
		if !strings.Contains(lines[len(lines)-1], want) {
			t.Errorf("line %q lacks %q", lines[len(lines)-1], want)
		}
	}
}

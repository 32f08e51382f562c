package integration

import (
	"bytes"
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
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// lockedBuf is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

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
	var logs lockedBuf
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

	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "threadlimit: refusing calls") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || len(lines) > 13 {
		t.Fatalf("%d refusal lines for %d refusals, want 1 to 13 (first, doublings to 1,024, one per 10 s):\n%s", len(lines), n, strings.Join(lines, "\n"))
	}
	sum := int64(len(lines))
	var lastBurst int64 = 1
	for i, l := range lines {
		for _, want := range []string{"level=WARN", `limit="threads=1"`, "service=demo.Echo", "method=Echo", "provider=" + e.URL().Address(), "refused="} {
			if !strings.Contains(l, want) {
				t.Errorf("line %q lacks %q", l, want)
			}
		}
		if i == 0 {
			continue
		}
		m := regexp.MustCompile(`suppressed=(\d+) in_burst=(\d+)`).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %d lacks suppressed= and in_burst=: %q", i+1, l)
		}
		s, _ := strconv.ParseInt(m[1], 10, 64)
		lastBurst, _ = strconv.ParseInt(m[2], 10, 64)
		sum += s
	}
	if sum != lastBurst || lastBurst > int64(n) {
		t.Errorf("lines + suppressed = %d, last in_burst %d, refusals %d: the counts do not add up", sum, lastBurst, n)
	}
	t.Logf("%d refusals, %d lines, metric %d; last: %s", n, len(lines), counterValue(t, after, "airnode_threads_rejections_total"), lines[len(lines)-1])
}

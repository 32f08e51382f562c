package integration

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Acceptance: after 1,000 Echo calls the provider's /metrics shows 1000 in
// the call counter of demo.Echo/Echo and the latency histogram; the
// consumer counts them too.
func TestMetrics_1000EchoCallsOnMetricsEndpoint(t *testing.T) {
	pn, addr := provider(t, "")
	cn := newNode(t)
	r := refer(t, cn, addr, "timeout=5s")
	ctx := ctxT(t)
	for i := range 1000 {
		if v, err := r.Invoke(ctx, "Echo", "x"); err != nil || v != "x" {
			t.Fatalf("call %d: %v, %v", i, v, err)
		}
	}
	srv, err := metrics.Listen("127.0.0.1:0", registryOf(t, pn))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	body := get(t, "http://"+srv.Addr().String()+"/metrics")
	for _, want := range []string{
		`airnode_calls_total{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_count{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_bucket{method="Echo",service="demo.Echo",side="provider",le="+Inf"} 1000`,
		`airnode_calls_in_flight{method="Echo",service="demo.Echo",side="provider"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `side="consumer"`) {
		t.Error("the provider's registry has consumer series")
	}
	st, ok := registryOf(t, cn).Lookup(spi.Consumer, "demo.Echo", "Echo")
	if !ok || st.Count != 1000 || st.SuccessRate != 1 || st.P99Millis <= 0 || st.Throughput <= 0 {
		t.Errorf("consumer row %+v", st)
	}
	table := get(t, "http://"+srv.Addr().String()+"/stats?format=text")
	if !strings.Contains(table, "provider  demo.Echo  Echo    1000") {
		t.Errorf("/stats table:\n%s", table)
	}
}

// Acceptance: filter=-metrics removes the metrics filter for that
// reference only.
func TestMetrics_FilterMinusMetricsRemovesIt(t *testing.T) {
	_, addr := provider(t, "")
	cn := newNode(t)
	without := refer(t, cn, addr, "filter=-metrics")
	ctx := ctxT(t)
	for range 5 {
		if _, err := without.Invoke(ctx, "Echo", 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := registryOf(t, cn).Lookup(spi.Consumer, "demo.Echo", "Echo"); ok {
		t.Fatal("filter=-metrics: the reference's calls were recorded")
	}
	with := refer(t, cn, addr, "")
	if _, err := with.Invoke(ctx, "Echo", 1); err != nil {
		t.Fatal(err)
	}
	if st, ok := registryOf(t, cn).Lookup(spi.Consumer, "demo.Echo", "Echo"); !ok || st.Count != 1 {
		t.Fatalf("reference without filter=: row %+v", st)
	}
}

// Acceptance: executes=2 on Sleep: of 10 concurrent Sleep 500 calls exactly
// 2 succeed, the other 8 get SERVER_THREADPOOL_EXHAUSTED at once; the next
// window again lets 2 through.
func TestExecuteLimit_TwoPerWindow(t *testing.T) {
	pn, addr := provider(t, "executes=2")
	r := refer(t, newNode(t), addr, "timeout=5s")
	ctx := ctxT(t)
	before := counters.Access.ExecutesRejections.Load()
	for window := range 2 {
		type outcome struct {
			err  error
			took time.Duration
		}
		out := make(chan outcome, 10)
		var wg sync.WaitGroup
		start := time.Now()
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := r.Invoke(ctx, "Sleep", 500)
				out <- outcome{err, time.Since(start)}
			}()
		}
		wg.Wait()
		close(out)
		ok, refused := 0, 0
		var firstDone, lastRefusal time.Duration = time.Hour, 0
		for o := range out {
			switch {
			case o.err == nil:
				ok++
				firstDone = min(firstDone, o.took)
				if o.took < 450*time.Millisecond {
					t.Errorf("window %d: a Sleep 500 returned after %v", window, o.took)
				}
			case errors.Is(o.err, spi.ErrServerThreadpoolExhausted):
				refused++
				lastRefusal = max(lastRefusal, o.took)
			default:
				t.Errorf("window %d: %v", window, o.err)
			}
		}
		// "At once": every refusal came back while the admitted calls were
		// still sleeping, not queued behind them.
		if lastRefusal >= firstDone {
			t.Errorf("window %d: a refusal came after %v, once an admitted call had finished (%v)", window, lastRefusal, firstDone)
		}
		if ok != 2 || refused != 8 {
			t.Errorf("window %d: %d succeeded, %d refused; want 2 and 8", window, ok, refused)
		}
	}
	if n := counters.Access.ExecutesRejections.Load() - before; n < 16 {
		t.Errorf("executes rejections counted %d, want at least 16", n)
	}
	st, _ := registryOf(t, pn).Lookup(spi.Provider, "demo.Echo", "Sleep")
	if st.FailuresByStatus["SERVER_THREADPOOL_EXHAUSTED"] < 16 || st.InFlight != 0 {
		t.Errorf("provider Sleep row %+v", st)
	}
}

// Wrong or missing token: a permission error (BAD_REQUEST "token ...
// refused"), counted as a token rejection, not in the method's row; the
// right token: OK.
func TestToken_RightWrongMissing(t *testing.T) {
	pn, addr := provider(t, "token=s3cret")
	cn := newNode(t)
	ctx := ctxT(t)
	before := counters.Access.TokenRejections.Load()
	if v, err := refer(t, cn, addr, "token=s3cret").Invoke(ctx, "Echo", "hi"); err != nil || v != "hi" {
		t.Fatalf("right token: %v, %v", v, err)
	}
	for q, want := range map[string]string{"token=guess": "wrong token", "": "missing token"} {
		_, err := refer(t, cn, addr, q).Invoke(ctx, "Echo", "hi")
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusBadRequest || !strings.Contains(e.Message, want) ||
			!strings.Contains(e.Message, "refused") || !strings.Contains(e.Message, "from 127.0.0.1:") {
			t.Errorf("%q: %v, want BAD_REQUEST %q ... refused", q, err, want)
		}
	}
	if n := counters.Access.TokenRejections.Load() - before; n < 2 {
		t.Errorf("token rejections counted %d, want 2", n)
	}
	// refused before the service: no call or failure of the method, only
	// the token counter (tester7 item 8)
	if st, _ := registryOf(t, pn).Lookup(spi.Provider, "demo.Echo", "Echo"); st.Count != 1 || st.Failures != 0 {
		t.Errorf("provider row %+v: want the one call with the right token, no failure", st)
	}
}

// actives=1: a second call waits for the first; a third, still without a
// slot when its timeout passes, fails with CLIENT_TIMEOUT.
func TestActiveLimit_WaitThenClientTimeout(t *testing.T) {
	_, addr := provider(t, "")
	r := refer(t, newNode(t), addr, "actives=1&timeout=1000&cluster=failfast") // failover would retry the CLIENT_TIMEOUT
	ctx := ctxT(t)
	// The first call holds the slot until 800 ms; the second gets it then
	// and holds it until at least 1.6 s; the third gives up at its timeout,
	// about 1.1 s.
	first := make(chan error, 1)
	go func() { _, err := r.Invoke(ctx, "Sleep", 800); first <- err }()
	time.Sleep(100 * time.Millisecond)
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := r.Invoke(ctx, "Sleep", 800); errs <- err }()
	}
	if err := <-first; err != nil {
		t.Fatalf("first: %v", err)
	}
	var ok, timedOut int
	for range 2 {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case errors.Is(err, spi.ErrClientTimeout) && strings.Contains(err.Error(), "activelimit"):
			timedOut++
		default:
			t.Errorf("waiting call: %v", err)
		}
	}
	if ok != 1 || timedOut != 1 {
		t.Errorf("%d ran after waiting, %d timed out; want 1 and 1", ok, timedOut)
	}
}

// accesslog=<file> on the provider: one line per call with the consumer's
// address, service, method, status and duration, no arguments.
func TestAccessLog_ProviderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	_, addr := provider(t, "accesslog="+path)
	r := refer(t, newNode(t), addr, "")
	ctx := ctxT(t)
	if _, err := r.Invoke(ctx, "Echo", "private-value"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctx, "Fail", "boom"); err == nil {
		t.Fatal("Fail succeeded")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), data)
	}
	for i, want := range []string{"method=Echo status=OK", "method=Fail status=SERVICE_ERROR"} {
		l := lines[i]
		if !strings.Contains(l, want) || !strings.Contains(l, "side=provider consumer=127.0.0.1:") ||
			!strings.Contains(l, "service=demo.Echo") || !strings.Contains(l, "duration=") {
			t.Errorf("line %q, want %q", l, want)
		}
	}
	if strings.Contains(string(data), "private-value") {
		t.Error("arguments logged")
	}
}

// threads=2: two services exported on one address share two running calls;
// the third concurrent Sleep, on either service, is refused at once.
func TestThreadLimit_ProviderWide(t *testing.T) {
	pn := newNode(t)
	ctx := ctxT(t)
	a, err := pn.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=a&threads=2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pn.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://"+a.URL().Address()+"/demo.Echo?group=b&threads=2")); err != nil {
		t.Fatal(err)
	}
	cn := newNode(t)
	ra := refer(t, cn, a.URL().Address(), "group=a&timeout=5s&cluster=failfast")
	rb := refer(t, cn, a.URL().Address(), "group=b&timeout=5s&cluster=failfast")
	errs := make(chan error, 4)
	for i := range 4 {
		r := ra
		if i%2 == 1 {
			r = rb
		}
		go func() { _, err := r.Invoke(ctx, "Sleep", 400); errs <- err }()
	}
	ok, refused := 0, 0
	for range 4 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, spi.ErrServerThreadpoolExhausted) && strings.Contains(err.Error(), "threads=2"):
			refused++
			if ok > 0 {
				t.Error("a refusal came after an admitted call had finished, not at once")
			}
		default:
			t.Errorf("call: %v", err)
		}
	}
	if ok != 2 || refused != 2 {
		t.Errorf("%d ran, %d refused; want 2 and 2", ok, refused)
	}
}

// A method-level limit with executes=0 at service level (which activates
// the filter): Sleep is capped at 1, Echo is not.
func TestExecuteLimit_MethodLevel(t *testing.T) {
	_, addr := provider(t, "executes=0&methods.Sleep.executes=1")
	r := refer(t, newNode(t), addr, "timeout=5s&cluster=failfast")
	ctx := ctxT(t)
	errs := make(chan error, 3)
	for range 3 {
		go func() { _, err := r.Invoke(ctx, "Sleep", 300); errs <- err }()
	}
	var echoes sync.WaitGroup
	for range 5 {
		echoes.Add(1)
		go func() {
			defer echoes.Done()
			if _, err := r.Invoke(ctx, "Echo", 1); err != nil {
				t.Errorf("Echo: %v", err)
			}
		}()
	}
	echoes.Wait()
	ok, refused := 0, 0
	for range 3 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, spi.ErrServerThreadpoolExhausted):
			refused++
		default:
			t.Errorf("Sleep: %v", err)
		}
	}
	if ok != 1 || refused != 2 {
		t.Errorf("%d ran, %d refused; want 1 and 2", ok, refused)
	}
}

// token=true: the kernel publishes a random token in the registered
// provider URL; a consumer that finds the provider through the registry
// sends it and gets through, a direct one without it is rejected.
func TestToken_RandomThroughRegistry(t *testing.T) {
	cat := catalogs(t)
	reg := spi.MustParse("memory://token-filter")
	pn := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0), kernel.WithRegistry(reg))
	defer pn.Close()
	e, err := pn.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=true"))
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := e.URL().Param("token"); len(tok) != 32 || tok == "true" {
		t.Fatalf("published token %q", tok)
	}
	cn := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer cn.Close()
	r, err := cn.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("through the registry: %v, %v", v, err)
	}
	if _, err := refer(t, cn, e.URL().Address(), "").Invoke(ctxT(t), "Echo", "x"); !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("direct, no token: %v", err)
	}
}

// actives=1 counts per provider: with two providers and roundrobin, two
// concurrent calls run at once, one on each, where a per-reference limit
// would hold the second back.
func TestActiveLimit_PerProvider(t *testing.T) {
	pa, addrA := provider(t, "")
	pb, addrB := provider(t, "")
	r := refer(t, newNode(t), addrA+","+addrB, "actives=1&timeout=3s&loadbalance=roundrobin&cluster=failfast")
	ctx := ctxT(t)
	// A reference takes calls once one provider is connected; wait for
	// both, or roundrobin has only one to pick from.
	for len(r.Providers()) < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("providers available: %d, want 2", len(r.Providers()))
		case <-time.After(5 * time.Millisecond):
		}
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := r.Invoke(ctx, "Sleep", 800); errs <- err }()
	}
	inFlight := func(n *kernel.Node) int64 {
		st, _ := registryOf(t, n).Lookup(spi.Provider, "demo.Echo", "Sleep")
		return st.InFlight
	}
	both, done := false, 0
	for done < 2 {
		select {
		case err := <-errs:
			done++
			if err != nil {
				t.Errorf("Sleep: %v", err)
			}
		case <-time.After(5 * time.Millisecond):
			both = both || done == 0 && inFlight(pa) == 1 && inFlight(pb) == 1
		}
	}
	if !both {
		t.Error("the two providers never ran a call at the same time: actives=1 limited the reference, not each provider")
	}
}

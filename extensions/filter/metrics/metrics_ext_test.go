package metrics_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func build(t *testing.T, b *metrics.Builder, side spi.Side) spi.Filter {
	t.Helper()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=" + string(side)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuildNeedsSide(t *testing.T) {
	b := metrics.NewBuilder(nil)
	for _, u := range []string{"airnode://h:1/s", "airnode://h:1/s?side=both"} {
		_, err := b.Build(spi.MustParse(u))
		if err == nil || !strings.Contains(err.Error(), `"side"`) {
			t.Errorf("%s: err = %v, want one naming the side key", u, err)
		}
	}
	a := b.Activation()
	if len(a.Sides) != 2 || a.Key != "" || a.Order != metrics.Order {
		t.Errorf("activation %+v", a)
	}
	if r, ok := metrics.RegistryOf(b); !ok || r != b.Registry() {
		t.Error("RegistryOf does not return the builder's registry")
	}
	if _, ok := metrics.RegistryOf(nil); ok {
		t.Error("RegistryOf(nil) = ok")
	}
}

func TestCountsFailuresInFlightAndLatency(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	release := make(chan struct{})
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		switch inv.Method {
		case "Fail":
			return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
		case "Slow":
			<-release
			time.Sleep(20 * time.Millisecond)
		}
		return spi.Result{Value: inv.Args[0]}
	})
	ctx := context.Background()
	for i := range 100 {
		res := f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{i}})
		if res.Err != nil || res.Value != i {
			t.Fatalf("Echo: %+v", res)
		}
	}
	for range 3 {
		f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Fail", Args: []any{"x"}})
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Slow", Args: []any{1}})
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s, _ := reg.Lookup(spi.Provider, "demo.Echo", "Slow"); s.InFlight == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("in-flight never reached 4")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()

	echo, ok := reg.Lookup(spi.Provider, "demo.Echo", "Echo")
	if !ok || echo.Count != 100 || echo.Failures != 0 || echo.SuccessRate != 1 || echo.InFlight != 0 {
		t.Errorf("Echo row %+v", echo)
	}
	fail, _ := reg.Lookup(spi.Provider, "demo.Echo", "Fail")
	if fail.Count != 3 || fail.Failures != 3 || fail.SuccessRate != 0 || fail.FailuresByStatus["SERVICE_ERROR"] != 3 {
		t.Errorf("Fail row %+v", fail)
	}
	slow, _ := reg.Lookup(spi.Provider, "demo.Echo", "Slow")
	if slow.Count != 4 || slow.InFlight != 0 || slow.MeanMillis < 19 || slow.P99Millis < 19 || slow.MaxMillis < slow.P99Millis*0.98 {
		t.Errorf("Slow row %+v", slow)
	}
	if _, ok := reg.Lookup(spi.Consumer, "demo.Echo", "Echo"); ok {
		t.Error("a provider filter recorded a consumer row")
	}
	if rows := reg.Snapshot(); len(rows) != 3 || rows[0].Method != "Echo" || rows[2].Method != "Slow" {
		t.Errorf("snapshot %+v", rows)
	}
}

func TestPanicIsRecorded(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Consumer)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(context.Context, *spi.Invocation) spi.Result { panic("bad") })
	func() {
		defer func() { _ = recover() }()
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	}()
	s, _ := reg.Lookup(spi.Consumer, "s", "M")
	if s.Count != 1 || s.InFlight != 0 || s.FailuresByStatus["CLIENT_ERROR"] != 1 {
		t.Errorf("row after panic %+v", s)
	}
}

func TestHTTPEndpoints(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		if inv.Method == "Fail" {
			return spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "late")}
		}
		return spi.Result{Value: 1}
	})
	for range 7 {
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	}
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Fail"})
	metrics.Heartbeat.PingsSent.Inc()

	srv, err := metrics.Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr().String()
	body := get(t, base+"/metrics")
	for _, want := range []string{
		`airnode_calls_total{method="Echo",service="demo.Echo",side="provider"} 7`,
		`airnode_call_failures_total{method="Fail",service="demo.Echo",side="provider",status="SERVER_TIMEOUT"} 1`,
		`airnode_call_duration_seconds_count{method="Echo",service="demo.Echo",side="provider"} 7`,
		`airnode_call_duration_seconds_bucket{method="Echo",service="demo.Echo",side="provider",le="+Inf"} 7`,
		`airnode_calls_in_flight{method="Echo",service="demo.Echo",side="provider"} 0`,
		`airnode_heartbeat_pings_sent_total `,
		`airnode_registry_session_expiries_total `,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var rep metrics.StatsReport
	if err := json.Unmarshal([]byte(get(t, base+"/stats")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Methods) != 2 || rep.Methods[0].Method != "Echo" || rep.Methods[0].Count != 7 || rep.Counters["heartbeat.pings_sent"] < 1 {
		t.Errorf("/stats %+v", rep)
	}
	table := get(t, base+"/stats?format=text")
	if !strings.HasPrefix(table, "SIDE") || !strings.Contains(table, "SERVER_TIMEOUT=1") || !strings.Contains(table, "100.00%") {
		t.Errorf("/stats?format=text:\n%s", table)
	}
	for _, addr := range []string{srv.Addr().String(), base, base + "/stats", base + "/stats/"} {
		fetched, err := metrics.Fetch(context.Background(), addr)
		if err != nil || len(fetched.Methods) != 2 || fetched.Methods[0].Count != 7 {
			t.Errorf("Fetch(%s) = %+v, %v", addr, fetched, err)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := metrics.Fetch(context.Background(), base); err == nil {
		t.Error("Fetch from a closed server succeeded")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(base + "/metrics"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestListenBadAddress(t *testing.T) {
	_, err := metrics.Listen("127.0.0.1:-1", metrics.NewRegistry())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:-1") {
		t.Errorf("err = %v", err)
	}
}

func TestRegistriesAreIndependent(t *testing.T) {
	a, b := metrics.NewRegistry(), metrics.NewRegistry()
	fa := build(t, metrics.NewBuilder(a), spi.Consumer)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	fa.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	if _, ok := b.Lookup(spi.Consumer, "s", "M"); ok {
		t.Error("registry b saw a's call")
	}
}

func TestSeriesAreBounded(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	for i := range metrics.MaxSeries + 50 {
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "m" + strconv.Itoa(i)})
	}
	if n := len(reg.Snapshot()); n != metrics.MaxSeries+1 {
		t.Fatalf("%d series, want %d", n, metrics.MaxSeries+1)
	}
	if o, ok := reg.Lookup(spi.Provider, "s", metrics.OtherMethod); !ok || o.Count != 50 {
		t.Errorf("other row %+v", o)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b)
}

// TestOneFilterSeveralServices checks that a filter's cache of series
// (keyed by method for the first service it sees) never records a call of
// another service, or of more methods than it caches, under the wrong row.
func TestOneFilterSeveralServices(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Consumer)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	const methods = 300 // more than the filter caches
	for range 2 {
		for i := range methods {
			m := "m" + strconv.Itoa(i)
			f.Invoke(context.Background(), next, &spi.Invocation{Service: "a", Method: m})
			f.Invoke(context.Background(), next, &spi.Invocation{Service: "b", Method: m})
		}
	}
	for _, svc := range []string{"a", "b"} {
		for i := range methods {
			if s, ok := reg.Lookup(spi.Consumer, svc, "m"+strconv.Itoa(i)); !ok || s.Count != 2 {
				t.Fatalf("%s.m%d: %+v, %v; want 2 calls", svc, i, s, ok)
			}
		}
	}
}

// TestThroughputUsesClock checks that WithClock drives throughput: calls
// ending 100 ms apart by that clock: 11 calls over 1 s (Count over the
// time from the first to the last completion).
func TestThroughputUsesClock(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	reg := metrics.NewRegistry(metrics.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(100 * time.Millisecond)
		return now
	}))
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	for range 11 {
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	}
	if s, _ := reg.Lookup(spi.Provider, "s", "M"); s.Count != 11 || s.Throughput < 10.99 || s.Throughput > 11.01 {
		t.Errorf("row %+v, want 11 calls over 1 s", s)
	}
}

// New-user finding: TPS was measured between the first and the last call
// of a method, so one call 5 minutes after a benchmark turned 21439
// calls/s into 2874. RecentTPS is the rate over the last 10 s (as
// Prometheus' rate() or Dubbo's monitor read it) and LifetimeTPS the
// average since the first call, idle time included; Throughput keeps its
// meaning for /stats readers. The registry's clock is set by hand.
func TestRecentTPSIsOverTheLastTenSeconds(t *testing.T) {
	var mu sync.Mutex
	start := time.Unix(1_700_000_000, 0)
	now := start
	set := func(at time.Time) { mu.Lock(); now = at; mu.Unlock() }
	reg := metrics.NewRegistry(metrics.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	call := func(at time.Time) {
		set(at)
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	}
	row := func(at time.Time) metrics.MethodStats {
		set(at)
		s, _ := reg.Lookup(spi.Provider, "s", "M")
		return s
	}
	near := func(got, want float64) bool { return got >= want*0.98 && got <= want*1.02 }
	// a benchmark: 20000 calls in 1 s
	for i := range 20000 {
		call(start.Add(time.Duration(i) * 50 * time.Microsecond))
	}
	if s := row(start.Add(time.Second)); !near(s.RecentTPS, 20000) || !near(s.LifetimeTPS, 20000) || !near(s.Throughput, 20000) || !near(s.RecentWindowSeconds, 1) {
		t.Errorf("right after the benchmark: %+v; want 20000 calls/s over 1 s", s)
	}
	// one call 5 minutes later
	late := start.Add(5 * time.Minute)
	call(late)
	s := row(late)
	if !near(s.RecentTPS, 0.1) || !near(s.LifetimeTPS, 20001/300.0) || s.RecentWindowSeconds != 10 {
		t.Errorf("one call 5 min later: recent %.3f, lifetime %.3f; want 0.1 (1 call in 10 s) and %.1f", s.RecentTPS, s.LifetimeTPS, 20001/300.0)
	}
	// idle: nothing in the window
	if s := row(late.Add(11 * time.Second)); s.RecentTPS != 0 || s.LifetimeTPS <= 0 {
		t.Errorf("idle 11 s: %+v; want recent 0, a lifetime average", s)
	}
	// steady 100 calls/s for 30 s: the window reads 100, read at any
	// point of a second (the buckets' seconds start where the process's
	// clock base does)
	steady := late.Add(time.Minute)
	for i := range 3000 {
		at := steady.Add(time.Duration(i) * 10 * time.Millisecond)
		call(at)
		if i >= 1000 && i%97 == 0 {
			if s := row(at); !near(s.RecentTPS, 100) {
				t.Errorf("steady 100 calls/s, read at +%v: recent %.2f", at.Sub(steady), s.RecentTPS)
			}
		}
	}
	// after it stops, the window empties second by second
	end := steady.Add(30 * time.Second)
	if s := row(end.Add(5 * time.Second)); !near(s.RecentTPS, 50) {
		t.Errorf("5 s after a steady 100 calls/s stopped: recent %.2f, want 50", s.RecentTPS)
	}
}

// A clock before the process started (negative time since its base) keeps
// the per-second buckets right.
func TestRecentTPSWithAnEarlyClock(t *testing.T) {
	now := time.Unix(0, 0)
	reg := metrics.NewRegistry(metrics.WithClock(func() time.Time { return now }))
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil)
	for range 5 {
		now = now.Add(300 * time.Millisecond)
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	}
	// from the first call's start (0.3 s) to the last (1.5 s): 5 calls in 1.2 s
	if s, _ := reg.Lookup(spi.Provider, "s", "M"); s.RecentTPS < 4.1 || s.RecentTPS > 4.2 || s.Count != 5 {
		t.Errorf("5 calls in 1.2 s: %+v; want recent 4.17", s)
	}
}

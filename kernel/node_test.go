package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// provider starts a node exporting demo.Echo on a free loopback port.
func provider(t *testing.T, opts ...Option) (*Node, *Exporter) {
	t.Helper()
	opts = append([]Option{WithLogger(quiet), WithShutdownWait(0)}, opts...)
	n := NewNode(testCatalogs(t), opts...)
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n, e
}

func consumer(t *testing.T) *Node {
	t.Helper()
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func refer(t *testing.T, n *Node, u string) *Reference {
	t.Helper()
	r, err := n.Refer(ctxT(t), spi.MustParse(u), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// referConnected refers demo.Echo directly at the exporters' addresses,
// with the URL query given, and waits until every provider is connected.
func referConnected(t *testing.T, query string, es ...*Exporter) *Reference {
	t.Helper()
	addrs := make([]string, len(es))
	for i, e := range es {
		addrs[i] = e.URL().Address()
	}
	r := refer(t, consumer(t), "airnode://"+strings.Join(addrs, ",")+"/demo.Echo?"+query)
	eventually(t, "every provider connected", func() bool {
		for _, inv := range r.Providers() {
			if !inv.(*remoteInvoker).conns[0].ready() {
				return false
			}
		}
		return len(r.Providers()) == len(es)
	})
	return r
}

func TestExportURLKeys(t *testing.T) {
	before := time.Now().UnixMilli()
	_, e := provider(t)
	u := e.URL()
	if u.Port() == 0 || u.Host() != "127.0.0.1" {
		t.Fatalf("address %s", u.Address())
	}
	ts, _ := u.Int("timestamp", 0)
	if ts < before || ts > time.Now().UnixMilli() {
		t.Fatalf("timestamp %d", ts)
	}
	want := map[string]string{"methods": "Echo,Fail,Info,Payload,Sleep", "weight": "100", "side": "provider"}
	for k, v := range want {
		if got, _ := u.Param(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if d, err := u.Duration("warmup", 0); err != nil || d != 10*time.Minute {
		t.Errorf("warmup = %v, %v", d, err)
	}
}

func TestExportRejectsBadWeight(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for _, w := range []string{"-1", "abc"} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?weight="+w))
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("weight=%s: %v", w, err)
		}
	}
}

func TestExportReferEcho(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	r := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo")
	ctx := ctxT(t)
	v, err := r.Invoke(ctx, "Echo", "hello")
	if err != nil || v != "hello" {
		t.Fatalf("Echo = %v, %v", v, err)
	}
	var ms int
	if err := r.Call(ctx, "Sleep", []any{5}, &ms); err != nil || ms != 5 {
		t.Fatalf("Sleep = %v, %v", ms, err)
	}
	var info demo.Info
	if err := r.Call(ctx, "Info", nil, &info); err != nil || info.Node != "p" || info.Weight != 100 {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestProviderErrors(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	addr := e.URL().Address()
	r := refer(t, c, "airnode://"+addr+"/demo.Echo")
	ctx := ctxT(t)
	cases := []struct {
		method string
		args   []any
		status spi.Status
		text   string
	}{
		{"Nope", []any{1}, spi.StatusServiceNotFound, "Nope"},
		{"Sleep", []any{1, 2}, spi.StatusBadRequest, "demo.Echo.Sleep takes 1 argument (int), got 2"},
		{"Sleep", []any{"x"}, spi.StatusBadRequest, "Sleep"},
		{"Fail", []any{"boom"}, spi.StatusServiceError, "SERVICE_ERROR: boom"},
	}
	for _, tc := range cases {
		_, err := r.Invoke(ctx, tc.method, tc.args...)
		if spi.StatusOf(err) != tc.status || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s%v = %v, want %v containing %q", tc.method, tc.args, err, tc.status, tc.text)
		}
	}
	r2 := refer(t, c, "airnode://"+addr+"/nope.Svc")
	if _, err := r2.Invoke(ctx, "Echo", 1); spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "nope.Svc") {
		t.Fatalf("nope.Svc = %v", err)
	}
}

type panicky struct{}

func (panicky) Boom(ctx context.Context) (int, error) { panic("kaboom") }
func (panicky) Ok(ctx context.Context) (int, error)   { return 1, nil }

func TestPanicIsServerErrorAndProviderSurvives(t *testing.T) {
	n, e := provider(t)
	u := spi.MustParse("airnode://" + e.URL().Address() + "/panicky")
	if _, err := n.Export(ctxT(t), panicky{}, u); err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumer(t), u.String())
	if _, err := r.Invoke(ctxT(t), "Boom"); spi.StatusOf(err) != spi.StatusServerError {
		t.Fatalf("Boom = %v", err)
	}
	if v, err := r.Invoke(ctxT(t), "Ok"); err != nil || v == nil {
		t.Fatalf("Ok = %v, %v", v, err)
	}
}

func TestServicesShareOneServer(t *testing.T) {
	n, e := provider(t)
	e2, err := n.Export(ctxT(t), panicky{}, spi.MustParse("airnode://127.0.0.1:0/panicky"))
	if err != nil {
		t.Fatal(err)
	}
	if e.URL().Address() != e2.URL().Address() {
		t.Fatalf("two servers: %s and %s", e.URL().Address(), e2.URL().Address())
	}
	if _, err := n.Export(ctxT(t), panicky{}, spi.MustParse("airnode://"+e.URL().Address()+"/panicky")); err == nil {
		t.Fatal("exported twice")
	}
}

type generic struct{ stats spi.Stats }

func (g *generic) URL() spi.URL { return spi.URL{} }
func (g *generic) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	return spi.Result{Value: inv.Method + ":" + strconv.Itoa(len(inv.Args))}
}
func (g *generic) Available() bool   { return true }
func (g *generic) Stats() *spi.Stats { return &g.stats }
func (g *generic) Close() error      { return nil }

func TestExportInvoker(t *testing.T) {
	n, e := provider(t)
	u := spi.MustParse("airnode://" + e.URL().Address() + "/gen.Svc?methods=B,A")
	ge, err := n.ExportInvoker(ctxT(t), u, &generic{})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := ge.URL().Param("methods"); m != "A,B" {
		t.Fatalf("methods = %q", m)
	}
	r := refer(t, consumer(t), u.String())
	if v, err := r.Invoke(ctxT(t), "A", 1, "x"); err != nil || v != "A:2" {
		t.Fatalf("A = %v, %v", v, err)
	}
	if _, err := r.Invoke(ctxT(t), "C"); spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("C = %v", err)
	}
}

func TestRegistryExportReferAndUnregister(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://ns1")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(time.Millisecond))
	if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("Echo = %v, %v", v, err)
	}
	if err := p.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "provider unregistered", func() bool { return len(r.Providers()) == 0 })
	eventually(t, "its connection closed", func() bool {
		c.pool.mu.Lock()
		defer c.pool.mu.Unlock()
		return len(c.pool.conns) == 0
	})
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("Echo after shutdown = %v", err)
	}
}

func TestShutdownDrainsInFlight(t *testing.T) {
	p, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?timeout=5s")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Invoke(context.Background(), "Sleep", 300)
			errs <- err
		}()
	}
	eventually(t, "calls in flight", func() bool {
		s := p.servers
		for _, srv := range s {
			return srv.srv.InFlight() == 20
		}
		return false
	})
	if err := p.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("in-flight call failed: %v", err)
		}
	}
}

// TestTimeoutAndStats: a call the provider does not answer within the
// method's timeout (50ms) fails with SERVER_TIMEOUT and is counted in the
// provider invoker's stats. The call is made once the provider is
// connected: a call made while the first connection is still being set
// up waits for it within its own timeout, and on a loaded machine 50ms
// may run out there (CLIENT_TIMEOUT, nothing was sent: the documented
// answer, TestHungProviderCallWithinTimeout), not what this test is about.
func TestTimeoutAndStats(t *testing.T) {
	_, e := provider(t)
	r := referConnected(t, "timeout=2s&methods.Sleep.timeout=50ms", e)
	_, err := r.Invoke(ctxT(t), "Sleep", 1000)
	if spi.StatusOf(err) != spi.StatusServerTimeout {
		t.Fatalf("Sleep = %v, want SERVER_TIMEOUT", err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	inv := r.Providers()[0]
	if s := inv.Stats(); s.Active() != 0 || s.Total() != 2 || s.Failed() != 1 {
		t.Fatalf("stats active=%d total=%d failed=%d", s.Active(), s.Total(), s.Failed())
	}
}

func TestConnectionRefusedFailsFast(t *testing.T) {
	r := refer(t, consumer(t), "airnode://127.0.0.1:1/demo.Echo")
	start := time.Now()
	_, err := r.Invoke(ctxT(t), "Echo", 1)
	t.Logf("error: %v", err)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || time.Since(start) > 3*time.Second {
		t.Fatalf("Echo = %v after %v", err, time.Since(start))
	}
}

// H3: the provider is killed and restarted on the same port with no calls
// in between; the consumer has reconnected by itself.
func TestH3_ReconnectsWithoutCalls(t *testing.T) {
	p, e := provider(t)
	addr := e.URL().Address()
	r := refer(t, consumer(t), "airnode://"+addr+"/demo.Echo?reconnect.backoff=20ms")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	inv := r.Providers()[0]
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "provider unavailable", func() bool { return !inv.Available() })
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err == nil {
		t.Fatal("call succeeded with the provider down")
	}
	time.Sleep(300 * time.Millisecond)
	p2 := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p2.Close()
	if _, err := p2.Export(ctxT(t), demo.New("p2", 100), spi.MustParse("airnode://"+addr+"/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	rinv := inv.(*remoteInvoker)
	eventually(t, "reconnected with no call", func() bool { return rinv.conns[0].ready() })
	var info demo.Info
	if err := r.Call(ctxT(t), "Info", nil, &info); err != nil || info.Node != "p2" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestConcurrentCallsOneConnection(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?timeout=20s")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Invoke(context.Background(), "Echo", float64(i))
			if err == nil && v != float64(i) {
				err = errors.New("wrong answer")
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d failures, first %v", len(errs), errs[0])
	}
	if n := len(r.node.pool.conns); n != 1 {
		t.Fatalf("%d connections", n)
	}
}

func TestCloseIdempotentAndReferAfterClose(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err == nil {
		t.Fatal("export after close")
	}
}

func TestReferRejectsUnknownCodec(t *testing.T) {
	_, err := consumer(t).Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?codec=jsn"), spi.URL{})
	if err == nil || !strings.Contains(err.Error(), `unknown codec "jsn"`) {
		t.Fatalf("Refer = %v", err)
	}
}

func TestConnectionsRoundRobin(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	r := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo?connections=3")
	for i := range 30 {
		if _, err := r.Invoke(ctxT(t), "Echo", i); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.pool.conns); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
	// a second reference to the same provider shares them
	r2 := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo?connections=3")
	if _, err := r2.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	if n := len(c.pool.conns); n != 3 {
		t.Fatalf("%d connections after a second reference, want 3", n)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatalf("first reference broken by closing the second: %v", err)
	}
}

func TestBadConsumerKeys(t *testing.T) {
	c := consumer(t)
	for _, q := range []string{"connections=0", "connect.timeout=abc", "reconnect.backoff=1h", "loadbalance=rundrobin"} {
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?"+q), spi.URL{})
		if err == nil {
			_, err = r.Invoke(ctxT(t), "Echo", 1)
		}
		key, _, _ := strings.Cut(q, "=")
		if err == nil || !strings.Contains(err.Error(), key) && !strings.Contains(err.Error(), "rundrobin") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// A provider whose connection died is not picked (the directory lists only
// available invokers) and a call that hits it fails fast with
// CHANNEL_INACTIVE, so failover goes to the other one: no call fails.
func TestFailoverAroundDeadProvider(t *testing.T) {
	pa, ea := provider(t)
	_, eb := provider(t)
	r := referConnected(t, "reconnect.backoff=1s", ea, eb)
	if err := pa.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := r.Invoke(ctxT(t), "Echo", i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	eventually(t, "dead provider unavailable", func() bool { return len(r.Providers()) == 1 })
}

// A reference through a registry publishes its consumer entry there until
// it closes.
func TestReferRegistersConsumer(t *testing.T) {
	dir := t.TempDir()
	reg := spi.MustParse("file://" + dir)
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		es, _ := os.ReadDir(filepath.Join(dir, "demo.Echo", "consumers"))
		return len(es)
	}
	if n := entries(); n != 1 {
		t.Fatalf("%d consumer entries, want 1", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 0 {
		t.Fatalf("%d consumer entries after Close, want 0", n)
	}
}

// A provider that starts shutting down tells its consumers (Dubbo's
// read-only event): they stop picking it at once, while the call already
// in flight on it still completes.
func TestShutdownReadOnlyStopsPicks(t *testing.T) {
	p, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?timeout=5s")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Invoke(context.Background(), "Sleep", 800); done <- err }()
	eventually(t, "call in flight", func() bool {
		for _, srv := range p.servers {
			return srv.srv.InFlight() == 1
		}
		return false
	})
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(ctxT(t)) }()
	eventually(t, "provider no longer picked", func() bool { return len(r.Providers()) == 0 })
	if err := <-done; err != nil {
		t.Fatalf("in-flight call failed: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

// A provider that unregisters to shut down drains its calls in flight, and
// its consumers let them finish: the consumer stops picking it when it
// leaves the directory but closes the connection only once those calls
// have their answers (tester: SIGTERM of a provider found through a
// registry failed the call running on it with CHANNEL_INACTIVE 'consumer
// released the provider').
func TestProviderLeavingTheRegistryFinishesCallsInFlight(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://leaving")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(time.Millisecond))
	if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?timeout=10s"), reg)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		v, err := r.Invoke(context.Background(), "Sleep", 800)
		if err == nil && fmt.Sprint(v) != "800" {
			err = fmt.Errorf("value %v", v)
		}
		got <- err
	}()
	eventually(t, "call in flight", func() bool {
		for _, srv := range p.servers {
			return srv.srv.InFlight() == 1
		}
		return false
	})
	if err := p.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("call in flight while its provider left the registry: %v", err)
	}
	eventually(t, "provider gone from the directory", func() bool { return len(r.Providers()) == 0 })
	eventually(t, "its connection closed", func() bool {
		c.pool.mu.Lock()
		defer c.pool.mu.Unlock()
		return len(c.pool.conns) == 0 && len(c.pool.leaving) == 0
	})
}

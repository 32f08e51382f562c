package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// Tester's bug 1: with one hung provider and one healthy one, fresh
// references (as `airnode call` makes) must reach the healthy one: the
// hung one is not available while it makes its first connection, and a
// call does not wait on it. Each call may take 5 s: a fresh reference's
// first call waits for the healthy provider's first connection (a dial
// and a first ping), which took over the default 1 s on a loaded machine
// (CLIENT_TIMEOUT "waiting for a first connection", seen in the kernel's
// other tests under load).
func TestHungProviderDoesNotFailCalls(t *testing.T) {
	_, e := provider(t)
	hung := testproxy.Hung(t)
	u := "airnode://" + hung + "," + e.URL().Address() + "/demo.Echo?connect.timeout=500ms&timeout=5s"
	for i := range 12 {
		c := NewNode(testCatalogs(t), WithLogger(quiet))
		r := refer(t, c, u)
		v, err := r.Invoke(ctxT(t), "Echo", i)
		_ = c.Close()
		if err != nil || fmt.Sprint(v) != strconv.Itoa(i) {
			t.Fatalf("call %d through a fresh reference = %v, %v; want the healthy provider's answer", i, v, err)
		}
	}
}

// A call whose only provider is hung fails within its own timeout, not
// after connect.timeout: CLIENT_TIMEOUT (nothing was sent), naming the
// provider it waited for. Later calls on the reference, the provider still
// not connected, fail at once with CHANNEL_INACTIVE naming it.
func TestHungProviderCallWithinTimeout(t *testing.T) {
	hung := testproxy.Hung(t)
	r := refer(t, consumer(t), "airnode://"+hung+"/demo.Echo?timeout=200ms&connect.timeout=20s")
	start := time.Now()
	_, err := r.Invoke(ctxT(t), "Echo", 1)
	took := time.Since(start)
	if spi.StatusOf(err) != spi.StatusClientTimeout || !strings.Contains(err.Error(), hung) || took > 2*time.Second {
		t.Fatalf("Echo = %v after %v; want CLIENT_TIMEOUT naming %s after about the 200ms timeout", err, took, hung)
	}
	t.Logf("failed after %v: %v", took, err)
}

// A fresh reference's first call waits for the first connection, then
// each failover attempt has its whole timeout (tester: the wait and the
// call shared one deadline, so failover had no time left to retry and the
// first call of `airnode call` never failed over): an idempotent
// Sleep(1000) with timeout=300ms through a fresh reference to two
// providers makes several attempts of 300 ms each.
func TestFirstCallRetriesAfterWaitingForConnections(t *testing.T) {
	_, a := provider(t)
	_, b := provider(t)
	for i := range 3 {
		c := consumer(t)
		r := refer(t, c, "airnode://"+a.URL().Address()+","+b.URL().Address()+"/demo.Echo?timeout=300ms&idempotent=true")
		start := time.Now()
		_, err := r.Invoke(ctxT(t), "Sleep", 1000)
		took := time.Since(start)
		if spi.StatusOf(err) != spi.StatusServerTimeout || !strings.Contains(err.Error(), "attempts") || took < 550*time.Millisecond {
			t.Fatalf("call %d: %v after %v; want SERVER_TIMEOUT after several attempts of 300ms each", i, err, took)
		}
		_ = c.Close()
	}
}

// Tester's bug 2: a consumer key that the provider invokers would reject
// (heartbeat relations, transport keys...) fails Refer at once with the
// builder's error, not later as "no provider available".
func TestReferRejectsKeysTheInvokerRejects(t *testing.T) {
	_, e := provider(t)
	c := consumer(t)
	cases := []struct{ query, want string }{
		{"heartbeat=dual&heartbeat.interval=10s&heartbeat.timeout=15s", "heartbeat.timeout"},
		{"heartbeat.retries=0", "heartbeat.retries"},
		{"heartbeat.interval=25h", "heartbeat.interval"},
		{"methods=Echo&methods.Echo.timeout=abc", "abc"},
		{"codec=bogus", "bogus"},
	}
	for _, tc := range cases {
		for _, reg := range []string{"", "memory://bug2"} {
			u := "airnode://" + e.URL().Address() + "/demo.Echo?" + tc.query
			var ru spi.URL
			if reg != "" {
				u, ru = "airnode:///demo.Echo?"+tc.query, spi.MustParse(reg)
			}
			r, err := c.Refer(ctxT(t), spi.MustParse(u), ru)
			if err == nil {
				_ = r.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Refer %s (registry %q) = %v; want an error naming %q", tc.query, reg, err, tc.want)
			}
		}
	}
}

// Tester's bug 3: a provider URL key that consumers' invokers would
// reject fails Export, naming the value, instead of registering a provider
// no consumer can use.
func TestExportRejectsKeysConsumersReject(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithRegistry(spi.MustParse("memory://bug3")))
	defer n.Close()
	for _, q := range []string{"timeout=abc", "codec=bogus", "connections=999", "connect.timeout=-1s", "methods.Echo.timeout=xyz"} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		_, v, _ := strings.Cut(q, "=")
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("Export with %s = %v; want an error naming %q", q, err, v)
		}
	}
}

// Tester's bug 4: a consumer on another transport than the provider's is
// told that the provider closed the connection during the first ping (a
// likely transport or TLS mismatch), not that it did not answer in time.
func TestTransportMismatchMessage(t *testing.T) {
	_, e := provider(t) // smux
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?transport=tcp&connect.timeout=5s")
	_, err := r.Invoke(ctxT(t), "Echo", 1)
	if spi.StatusOf(err) != spi.StatusChannelInactive || !strings.Contains(err.Error(), "closed the connection during the first ping") ||
		!strings.Contains(err.Error(), "mismatch") || strings.Contains(err.Error(), "nothing answered") {
		t.Fatalf("Echo = %v; want CHANNEL_INACTIVE saying the provider closed the connection (transport mismatch?)", err)
	}
	t.Log(err)
}

// noConsumers is a registry (memory underneath, scheme "noconsumers") that
// keeps provider entries only, as the staticregistry example plugin does.
type noConsumers struct{ mem *memory.Builder }

func (noConsumers) Name() string { return "noconsumers" }
func (b noConsumers) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.mem.Build(u.WithScheme("memory"))
	return noConsumersRegistry{r}, err
}

type noConsumersRegistry struct{ spi.Registry }

func (r noConsumersRegistry) Register(ctx context.Context, u spi.URL) error {
	if u.ParamOr(spi.KeySide, "") == string(spi.Consumer) {
		return spi.ErrNotSupported
	}
	return r.Registry.Register(ctx, u)
}

// Tester's bug 8: a registry that keeps no consumer entries
// (spi.ErrNotSupported) is no reason for a warning on every reference.
func TestReferQuietWhenRegistryKeepsNoConsumers(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Registry.Register(noConsumers{memory.NewBuilder()}, "test"); err != nil {
		t.Fatal(err)
	}
	reg := spi.MustParse("noconsumers://bug8")
	p := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	defer p.Close()
	if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	defer c.Close()
	for range 3 {
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), reg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
			t.Fatal(err)
		}
		_ = r.Close()
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("warnings logged:\n%s", logs.String())
	}
}

// Tester's bug 6: a call still running when the drain deadline passes is
// abandoned: its consumer is answered SERVER_ERROR saying the provider
// shut down (not a bare closed channel), and Shutdown's error counts it.
func TestShutdownAbandonsCallsPastTimeout(t *testing.T) {
	p, got := sleepInFlight(t, 300*time.Millisecond)
	err := p.Shutdown(ctxT(t))
	var ab *AbandonedError
	if !errors.As(err, &ab) || ab.Calls != 1 || !strings.Contains(err.Error(), "1 call still in flight was abandoned") {
		t.Fatalf("Shutdown = %v; want an AbandonedError counting 1 call", err)
	}
	select {
	case err := <-got:
		if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), "shut down: its shutdown timeout passed") {
			t.Fatalf("abandoned call = %v; want SERVER_ERROR saying the provider shut down as its timeout passed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("abandoned call not answered")
	}
}

// A shutdown told to stop at once (its context cancelled, as serve's
// second Ctrl-C does) abandons the calls in flight saying so, not that a
// timeout passed.
func TestShutdownStoppedAtOnceSaysSo(t *testing.T) {
	p, got := sleepInFlight(t, 20*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	var ab *AbandonedError
	if err := p.Shutdown(ctx); !errors.As(err, &ab) || ab.Calls != 1 {
		t.Fatalf("Shutdown = %v; want an AbandonedError counting 1 call", err)
	}
	select {
	case err := <-got:
		if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), "shut down: it was told to stop at once") {
			t.Fatalf("abandoned call = %v; want SERVER_ERROR saying the provider was told to stop at once", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("abandoned call not answered")
	}
}

// Scenario H3: a provider stopped and restarted on the same port while its
// consumer waits out a long reconnect backoff (10 s here; the default
// doubles to 30 s) is back for the next call: a call that finds no
// provider available asks the connection to redial at once instead of
// failing until the backoff ends.
func TestH3_RestartedProviderIsRedialedForTheNextCall(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	r := refer(t, consumer(t), "airnode://"+addr+"/demo.Echo?reconnect.backoff=10s&timeout=2s")
	if v, err := r.Invoke(ctxT(t), "Echo", "before"); err != nil || v != "before" {
		t.Fatalf("first call: %v, %v", v, err)
	}
	_ = p.Close()
	if !waitUntil(5*time.Second, func() bool { return len(r.Providers()) == 0 }) {
		t.Fatal("the consumer still lists the stopped provider as available")
	}
	back := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = back.Close() })
	if _, err := back.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v, err := r.Invoke(ctxT(t), "Echo", "after")
	if err != nil || v != "after" {
		t.Fatalf("call after the restart: %v, %v after %v; want the restarted provider's answer", v, err, time.Since(start))
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("call after the restart took %v, want well under the 10 s backoff", took)
	}
}

// waitUntil polls cond every 10 ms for at most d and reports whether it
// became true.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// sleepInFlight starts a provider node with the given shutdown timeout and
// a consumer call of Sleep(10 s) on it, and returns once the call is in
// flight; the call's error arrives on got.
func sleepInFlight(t *testing.T, shutdownTimeout time.Duration) (p *Node, got <-chan error) {
	t.Helper()
	p, e := provider(t, WithShutdownTimeout(shutdownTimeout))
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?timeout=20s")
	errs := make(chan error, 1)
	go func() {
		_, err := r.Invoke(context.Background(), "Sleep", 10_000)
		errs <- err
	}()
	eventually(t, "call in flight", func() bool {
		for _, srv := range p.servers {
			return srv.srv.InFlight() == 1
		}
		return false
	})
	return p, errs
}

package pluginrpc_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// startMoody runs testdata/moody as a real plugin process with env
// ("KEY=value") and returns its client; the test's cleanup kills it.
func startMoody(t *testing.T, env ...string) *pluginrpc.Client {
	t.Helper()
	cmd := exec.Command(pluginrpc.MoodyBinary)
	cmd.Env = append(os.Environ(), env...)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: pluginrpc.ClientPlugins(),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(pluginrpc.PointLoadBalance)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*pluginrpc.Client)
}

// hangFile returns the HANG_FILE environment entry of a plugin that hangs
// until the test ends (or until release is called).
func hangFile(t *testing.T) (env string, release func()) {
	f := filepath.Join(t.TempDir(), "hang")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = os.Remove(f) }
	t.Cleanup(release) // before the kill: the plugin's handlers return
	return "HANG_FILE=" + f, release
}

// events records what a balancer builder tells its host.
type events struct {
	mu        sync.Mutex
	bypasses  []pluginrpc.Bypass
	fallbacks []error
	slow      []time.Duration
}

func (e *events) options(name string, c *pluginrpc.Client) pluginrpc.LoadBalanceOptions {
	return pluginrpc.LoadBalanceOptions{
		Name:       name,
		Source:     pluginrpc.StaticSource(c),
		OnBypass:   func(b pluginrpc.Bypass) { e.mu.Lock(); e.bypasses = append(e.bypasses, b); e.mu.Unlock() },
		OnFallback: func(err error) { e.mu.Lock(); e.fallbacks = append(e.fallbacks, err); e.mu.Unlock() },
		OnSlow:     func(took, _ time.Duration) { e.mu.Lock(); e.slow = append(e.slow, took); e.mu.Unlock() },
	}
}

func (e *events) get() (b []pluginrpc.Bypass, f []error, s []time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append(b, e.bypasses...), append(f, e.fallbacks...), append(s, e.slow...)
}

func providers(query string) []spi.Invoker {
	var out []spi.Invoker
	for i := 1; i <= 2; i++ {
		out = append(out, spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:2000%d/demo.Echo?%s", i, query)), nil))
	}
	return out
}

func build(t *testing.T, o pluginrpc.LoadBalanceOptions, url string) spi.ContextLoadBalance {
	t.Helper()
	lb, err := pluginrpc.NewLoadBalanceBuilder(o).Build(spi.MustParse(url))
	if err != nil {
		t.Fatal(err)
	}
	return lb.(spi.ContextLoadBalance)
}

// A Select that hangs is cut at half of the caller's deadline (75 of
// 150 ms, not the 1 s bound), and the call goes on with the fallback (it
// failed CLIENT_TIMEOUT at the whole deadline before tester36 F6); the
// next calls bypass the plugin at once, with one report naming the point
// and the time it took.
func TestHungSelectEndsAtHalfTheCallersDeadlineThenIsBypassed(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	lb := build(t, ev.options("acme.moody", startMoody(t, "LB_MODE=hang", env)), "airnode://127.0.0.1/demo.Echo")
	list := providers("")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	x, err := lb.SelectContext(ctx, list, &spi.Invocation{Method: "Echo"})
	took := time.Since(start)
	if x == nil || err != nil {
		t.Fatalf("got %v, %v; want the fallback's pick", x, err)
	}
	if took < 60*time.Millisecond || took > 900*time.Millisecond {
		t.Fatalf("Select took %v under a 150ms deadline; want about 75ms", took)
	}
	if ctx.Err() != nil {
		t.Fatalf("the fallback's pick came after the caller's deadline")
	}
	b, _, _ := ev.get()
	if len(b) != 1 || b[0].Point != "Select" || b[0].For != time.Second || b[0].Took < 50*time.Millisecond || b[0].Bound > 75*time.Millisecond {
		t.Fatalf("bypass reports %+v; want one for Select bounded at about 75ms, 1s", b)
	}
	// Bypassed: the fallback picks without asking the plugin (which
	// would fail the call at its deadline).
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		x, err := lb.SelectContext(ctx, list, &spi.Invocation{Method: "Echo"})
		cancel()
		if err != nil || x == nil {
			t.Fatalf("bypassed select %d: %v, %v", i, x, err)
		}
	}
	if b, _, _ := ev.get(); len(b) != 1 {
		t.Fatalf("bypassed selects reported again: %+v", b)
	}
}

// A Select cut by the call's "timeout" key (50ms) waits half of it, then
// the call goes on with the fallback.
func TestSlowSelectEndsAtHalfTheCallsTimeout(t *testing.T) {
	var ev events
	lb := build(t, ev.options("acme.moody", startMoody(t, "LB_MODE=slow", "SLOW_MS=400")), "airnode://127.0.0.1/demo.Echo")
	start := time.Now()
	x, err := lb.SelectContext(context.Background(), providers("timeout=50ms"), &spi.Invocation{Method: "Echo"})
	if took := time.Since(start); took > 350*time.Millisecond {
		t.Fatalf("Select took %v with timeout=50ms", took)
	}
	if x == nil || err != nil {
		t.Fatalf("got %v, %v; want the fallback's pick", x, err)
	}
	if b, _, _ := ev.get(); len(b) != 1 || b[0].Bound != 25*time.Millisecond {
		t.Fatalf("bypass reports %+v; want one trip bounded at 25ms", b)
	}
}

// When the plugin's own bound (Timeout) is the shorter, the call falls
// back to the default balancer and goes on.
func TestSelectPastItsOwnBoundFallsBack(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	o := ev.options("acme.moody", startMoody(t, "LB_MODE=hang", env))
	o.Timeout = 100 * time.Millisecond
	lb := build(t, o, "airnode://127.0.0.1/demo.Echo")
	x, err := lb.SelectContext(context.Background(), providers("timeout=5s"), &spi.Invocation{Method: "Echo"})
	if err != nil || x == nil {
		t.Fatalf("got %v, %v; want the fallback's pick", x, err)
	}
	if b, _, _ := ev.get(); len(b) != 1 || b[0].Bound != 100*time.Millisecond {
		t.Fatalf("bypass reports %+v", b)
	}
}

// After the bypass one call probes the plugin: a probe that times out
// doubles the bypass; one that answers ends it and says so. The round
// trip's bound is 500 ms: with 50 ms, a probe to the released plugin (a
// gRPC round trip to another -race process) timed out again and again on
// a loaded machine, each doubling the bypass, until the deadline.
func TestBypassProbesAndRecovers(t *testing.T) {
	env, release := hangFile(t)
	var ev events
	o := ev.options("acme.moody", startMoody(t, "LB_MODE=hang", env))
	o.Bypass, o.MaxBypass = 100*time.Millisecond, 300*time.Millisecond
	o.Timeout = 500 * time.Millisecond
	lb := build(t, o, "airnode://127.0.0.1/demo.Echo")
	list := providers("timeout=5s")
	inv := &spi.Invocation{Method: "Echo"}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, _, _ := ev.get(); len(b) >= len(want) {
			for i, d := range want {
				if b[i].For != d || b[i].Recovered {
					t.Fatalf("bypass %d: %+v; want %v", i, b[i], d)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no probes")
		}
		if x, err := lb.SelectContext(context.Background(), list, inv); x == nil || err != nil {
			t.Fatalf("got %v, %v; want the fallback's pick", x, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	release()
	for {
		b, _, _ := ev.get()
		if last := b[len(b)-1]; last.Recovered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin answers again but is still bypassed")
		}
		lb.SelectContext(context.Background(), list, inv)
		time.Sleep(5 * time.Millisecond)
	}
	if x, err := lb.SelectContext(context.Background(), list, inv); err != nil || x != list[0] {
		t.Fatalf("after recovery: %v, %v; want the plugin's pick (the first)", x, err)
	}
}

// The call that probes a still-hung plugin after its bypass waits half of
// its timeout for it, then goes on with the fallback, as the first call
// does: it used to wait the whole timeout and fail CLIENT_TIMEOUT, once
// per bypass.
func TestHungProbeFallsBackWithinHalfTheCall(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	o := ev.options("acme.moody", startMoody(t, "LB_MODE=hang", env))
	o.Bypass, o.MaxBypass = 100*time.Millisecond, 100*time.Millisecond
	lb := build(t, o, "airnode://127.0.0.1/demo.Echo")
	list := providers("timeout=400ms")
	inv := &spi.Invocation{Method: "Echo"}
	if x, err := lb.SelectContext(context.Background(), list, inv); err != nil || x == nil {
		t.Fatalf("first Select: %v, %v; want the fallback's pick after half of timeout=400ms", x, err)
	}
	time.Sleep(150 * time.Millisecond) // the bypass is over: the next call probes
	start := time.Now()
	x, err := lb.SelectContext(context.Background(), list, inv)
	took := time.Since(start)
	if err != nil || x == nil {
		t.Fatalf("probe: %v, %v; want the fallback's pick", x, err)
	}
	if took < 150*time.Millisecond || took > 350*time.Millisecond {
		t.Fatalf("probe took %v; want about half of timeout=400ms", took)
	}
	if b, _, _ := ev.get(); len(b) != 2 || b[0].Bound != 200*time.Millisecond || b[1].Bound != 200*time.Millisecond {
		t.Fatalf("bypass reports %+v; want two trips bounded at 200ms", b)
	}
}

// A Build that hangs at Refer is bounded by the reference's timeout, and
// the plugin is bypassed: the calls that follow do not wait for it.
func TestHungBuildIsBoundedAndBypassed(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	o := ev.options("acme.moody", startMoody(t, "LB_BUILD=hang", env))
	start := time.Now()
	lb := build(t, o, "airnode://127.0.0.1/demo.Echo?timeout=200ms")
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Fatalf("Build took %v with timeout=200ms", d)
	}
	if b, _, _ := ev.get(); len(b) != 1 || b[0].Point != "Build" {
		t.Fatalf("bypass reports %+v; want one for Build", b)
	}
	for range 5 { // asking the plugin would fail them at their deadline
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		x, err := lb.SelectContext(ctx, providers(""), &spi.Invocation{Method: "Echo"})
		cancel()
		if x == nil || err != nil {
			t.Fatalf("select after a hung Build: %v, %v", x, err)
		}
	}
}

// A Select over a tenth of the call's timeout is reported as slow.
func TestSlowSelectIsReported(t *testing.T) {
	var ev events
	lb := build(t, ev.options("acme.moody", startMoody(t, "LB_MODE=slow", "SLOW_MS=60")), "airnode://127.0.0.1/demo.Echo")
	x, err := lb.SelectContext(context.Background(), providers("timeout=300ms"), &spi.Invocation{Method: "Echo"})
	if err != nil || x == nil {
		t.Fatal(x, err)
	}
	if _, _, s := ev.get(); len(s) != 1 || s[0] < 60*time.Millisecond {
		t.Fatalf("slow reports %v", s)
	}
	if b, _, _ := ev.get(); len(b) != 0 {
		t.Fatalf("a slow answer in time bypassed the plugin: %+v", b)
	}
}

// A plugin builder whose ReadsArguments is false gets no arguments in
// Select; by default it gets them.
func TestWithoutArgsSendsNoArguments(t *testing.T) {
	inv := &spi.Invocation{Method: "Echo", Args: []any{"hi"}}
	for _, reads := range []bool{true, false} {
		c := startMoody(t, "LB_MODE=args", fmt.Sprintf("READS_ARGS=%v", reads))
		d, err := pluginrpc.Describe(context.Background(), c, pluginrpc.PointLoadBalance)
		if err != nil {
			t.Fatal(err)
		}
		if d.WithoutArgs == reads {
			t.Fatalf("READS_ARGS=%v: Describe says WithoutArgs=%v", reads, d.WithoutArgs)
		}
		var ev events
		o := ev.options("acme.moody", c)
		o.WithoutArgs = d.WithoutArgs
		list := providers("")
		x, err := build(t, o, "airnode://127.0.0.1/demo.Echo").SelectContext(context.Background(), list, inv)
		if err != nil {
			t.Fatal(err)
		}
		if got := x == list[1]; got != reads {
			t.Fatalf("READS_ARGS=%v: the plugin saw arguments: %v", reads, got)
		}
	}
}

// A balancer in a plugin process sees how long each candidate's oldest
// call in flight has waited (spi.Stats.OldestInFlight crosses the
// protocol, as p2c and shortestresponse use it against stalled
// providers): moody's "waited" mode picks the one that waited least.
func TestPluginBalancerSeesOldestInFlight(t *testing.T) {
	c := startMoody(t, "LB_MODE=waited")
	var ev events
	list := providers("")
	list[0].Stats().BeginAt(spi.Mono() - 2*time.Second) // stalled for 2 s
	list[1].Stats().BeginAt(spi.Mono() - time.Millisecond)
	x, err := build(t, ev.options("acme.moody", c), "airnode://127.0.0.1/demo.Echo").SelectContext(context.Background(), list, &spi.Invocation{Method: "Echo"})
	if err != nil {
		t.Fatal(err)
	}
	if x != list[1] {
		t.Fatal("the plugin picked the provider whose call has waited 2 s over one whose call waited 1 ms: OldestInFlight did not cross")
	}
}

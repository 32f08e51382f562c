package kernel

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// The consumer's own path, from Reference.Call down to (not including)
// the exchange: the default consumer filters (metrics), failover, the
// directory, random with warm-up weights and the remote invoker, over two
// providers whose channels are fakes answering at once. It isolates the
// consumer's CPU and allocations per call from the wire and the provider:
//
//	go test -run XXX -bench ConsumerPath -benchmem ./kernel

// echoChannel is a channel that answers every call with its first
// argument, without I/O.
type echoChannel struct{}

func (echoChannel) InvokeFrom(_ context.Context, _ spi.Codec, inv *spi.Invocation, _, _ time.Duration) spi.Result {
	return spi.Result{Value: inv.Args[0]}
}
func (echoChannel) Ping(context.Context) error { return nil }
func (echoChannel) Close(string)               {}
func (echoChannel) CloseLogged(string)         {}
func (echoChannel) Done() <-chan struct{}      { return nil }
func (echoChannel) Wait()                      {}

// readyConn returns a conn that holds ch as its ready channel and owns no
// goroutine.
func readyConn(addr string, ch channel) *conn {
	c := &conn{addr: addr, done: make(chan struct{}), cancel: func() {}}
	close(c.done)
	c.state.Store(&connState{ch: ch})
	return c
}

// fakeChannels makes every provider invoker of r use ch instead of its
// real connections (which keep dialing in the background until r closes).
func fakeChannels(tb testing.TB, r *Reference, ch channel) {
	tb.Helper()
	all := r.dir.All()
	if len(all) == 0 {
		tb.Fatal("no provider invoker")
	}
	for _, inv := range all {
		ri, ok := inv.(*remoteInvoker)
		if !ok {
			tb.Fatalf("provider invoker is %T, want *remoteInvoker", inv)
		}
		ri.conns = []*conn{readyConn(ri.url.Address(), ch)}
	}
}

func BenchmarkConsumerPath(b *testing.B) {
	ctx := context.Background()
	n := NewNode(testCatalogs(b), WithLogger(quiet))
	defer n.Close()
	// Ports 1 and 2 refuse connections: the real conns never come up.
	r, err := n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1,127.0.0.1:2/demo.Echo?timeout=10s&connect.timeout=50ms"), spi.URL{})
	if err != nil {
		b.Fatal(err)
	}
	fakeChannels(b, r, echoChannel{})
	msg := strings.Repeat("x", benchPayload)
	call := func() {
		var reply string
		if err := r.Call(ctx, "Echo", []any{msg}, &reply); err != nil {
			b.Fatal(err)
		}
	}
	call()
	b.Run("c=1", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			call()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call()
			}
		})
	})
}

// reportCPU returns a function that reports the process's CPU time (user
// and system, every thread, GC included) per op since reportCPU was
// called, as "cpu-ns/op": on a machine shared with other work it moves far
// less than ns/op, which counts time spent waiting for a core.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scriptChannel answers "Fail" with SERVICE_ERROR and anything else after
// a 2 ms pause.
type scriptChannel struct{ echoChannel }

func (scriptChannel) InvokeFrom(_ context.Context, _ spi.Codec, inv *spi.Invocation, _, _ time.Duration) spi.Result {
	if inv.Method == "Fail" {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
	}
	time.Sleep(2 * time.Millisecond)
	return spi.Result{Value: inv.Args[0]}
}

// TestRemoteInvokerStats checks the statistics a remote invoker keeps per
// call (the clock read twice: elapsed and the window's instant from one
// reading): totals, failures, and a mean response of the successful calls
// only.
func TestRemoteInvokerStats(t *testing.T) {
	ctx := context.Background()
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	r, err := n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo?timeout=10s&connect.timeout=50ms&retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	fakeChannels(t, r, scriptChannel{})
	for range 5 {
		if _, err := r.Invoke(ctx, "Echo", "x"); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := r.Invoke(ctx, "Fail", "x"); spi.StatusOf(err) != spi.StatusServiceError {
			t.Fatalf("Fail: %v", err)
		}
	}
	s := r.dir.All()[0].Stats()
	mean, calls := s.MeanResponse()
	if s.Active() != 0 || s.Total() != 8 || s.Failed() != 3 || calls != 5 || mean < 2*time.Millisecond || mean > time.Second ||
		s.Elapsed() < 10*time.Millisecond {
		t.Fatalf("stats: active %d total %d failed %d elapsed %v mean %v over %d calls", s.Active(), s.Total(), s.Failed(), s.Elapsed(), mean, calls)
	}
}

// TestPerMethod checks which keys make a reference or a provider invoker
// resolve settings per method rather than take the service level's.
func TestPerMethod(t *testing.T) {
	for q, want := range map[string]bool{
		"timeout=1s&cluster=failfast&connect.timeout=1s&heartbeat.timeout=9s": false,
		"methods.Echo.timeout=5s":                    true,
		"methods.Echo.loadbalance=roundrobin":        true,
		"methods=Echo,Sleep&Sleep.timeout=5s":        true,
		"Sleep.timeout=5s":                           true,  // no methods list: Dubbo's form applies (U3)
		"methods=Echo&Sleep.timeout=5s":              false, // Sleep is not in methods: not a method key
		"methods=Echo&methods.Echo.retries=1":        false,
		"methods=Echo&Echo.codec=json&cluster=local": true,
	} {
		u := spi.MustParse("airnode://h:1/demo.Echo?" + q)
		if got := perMethod(u, "timeout", "codec", "cluster", "loadbalance"); got != want {
			t.Errorf("%s: perMethod = %v, want %v", q, got, want)
		}
	}
}

// TestMethodLevelStrategy checks that method-level cluster and
// loadbalance keys still choose their own strategy, and that a reference
// without any takes the service level's for every method.
func TestMethodLevelStrategy(t *testing.T) {
	ctx := context.Background()
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for _, tc := range []struct {
		query             string
		method            string
		cluster, balancer string
	}{
		{"", "Echo", "failover", "random"},
		{"methods.Fail.cluster=failfast", "Fail", "failfast", "random"},
		{"methods.Fail.cluster=failfast", "Echo", "failover", "random"},
		{"methods=Echo,Fail&Fail.loadbalance=roundrobin", "Fail", "failover", "roundrobin"},
	} {
		r, err := n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo?connect.timeout=50ms&"+tc.query), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.strategyFor(tc.method)
		if err != nil || s.clusterName != tc.cluster || s.lbName != tc.balancer {
			t.Errorf("%s: %s uses %+v, %v; want %s and %s", tc.query, tc.method, s, err, tc.cluster, tc.balancer)
		}
		if tc.cluster == "failover" && tc.balancer == "random" && s != r.base {
			t.Errorf("%s: %s does not use the service level's strategy", tc.query, tc.method)
		}
		_ = r.Close()
	}
}

// freshFilter fails a call whose Invocation carries anything from an
// earlier call (the reference recycles Invocations), then leaves an
// attachment behind.
type freshFilter struct{}

func (freshFilter) Name() string { return "fresh" }
func (freshFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}}
}
func (freshFilter) Build(spi.URL) (spi.Filter, error) { return freshFilter{}, nil }
func (freshFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if inv.Attachments != nil || inv.Service != "demo.Echo" || len(inv.Args) != 1 {
		return spi.Result{Err: spi.Errorf(spi.StatusClientError, "stale invocation %+v", inv)}
	}
	inv.SetAttachment("left", "behind")
	return next.Invoke(ctx, inv)
}

// TestInvocationIsFreshPerCall checks that a recycled Invocation reaches
// the filters as a new one: no attachments, reply or arguments of an
// earlier call.
func TestInvocationIsFreshPerCall(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	if err := cat.Filter.Register(freshFilter{}, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	n := NewNode(cat, WithLogger(quiet))
	defer n.Close()
	r, err := n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo?connect.timeout=50ms"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	fakeChannels(t, r, echoChannel{})
	for i := range 100 {
		want := "v" + strings.Repeat("x", i%7)
		if i%2 == 0 {
			var reply string
			if err := r.Call(ctx, "Echo", []any{want}, &reply); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if v, err := r.Invoke(ctx, "Echo", want); err != nil || v != want {
			t.Fatalf("Invoke = %v, %v; want %q", v, err, want)
		}
	}
}

// TestConsumerPathAllocatesNothing checks that a successful call from a
// reference down to the channel allocates nothing of its own once warm:
// no Invocation (recycled), filter closure, failover tried-set, balancer
// weight table or result wrapping. Arguments and reply are the caller's,
// made once here.
func TestConsumerPathAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	r, err := n.Refer(ctx, spi.MustParse("airnode://127.0.0.1:1,127.0.0.1:2/demo.Echo?connect.timeout=50ms"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	fakeChannels(t, r, echoChannel{})
	args := []any{"x"}
	var reply string
	call := func() {
		if err := r.Call(ctx, "Echo", args, &reply); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if a := testing.AllocsPerRun(1000, call); a != 0 {
		t.Errorf("%v allocations per call, want 0", a)
	}
}

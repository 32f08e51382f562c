package spitest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// StubInvoker is a programmable spi.Invoker for balancer and cluster tests.
// Like the kernel's remote invoker, Invoke records Begin/End on its Stats
// around every call. Safe for concurrent use.
type StubInvoker struct {
	url   spi.URL
	fn    func(context.Context, *spi.Invocation) spi.Result
	stats spi.Stats
	calls atomic.Int64
	down  atomic.Bool
}

// NewStubInvoker returns an available invoker with URL u whose Invoke
// returns fn's result; a nil fn answers Result{Value: u.Address()}.
func NewStubInvoker(u spi.URL, fn func(ctx context.Context, inv *spi.Invocation) spi.Result) *StubInvoker {
	return &StubInvoker{url: u, fn: fn}
}

// URL returns the URL given to NewStubInvoker.
func (s *StubInvoker) URL() spi.URL { return s.url }

// Invoke counts the call and returns fn's result, recording it in Stats.
func (s *StubInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	s.calls.Add(1)
	s.stats.Begin()
	start := time.Now()
	var r spi.Result
	if s.fn != nil {
		r = s.fn(ctx, inv)
	} else {
		r = spi.Result{Value: s.url.Address()}
	}
	s.stats.End(time.Since(start), r.Err == nil)
	return r
}

// Available reports false after SetAvailable(false).
func (s *StubInvoker) Available() bool { return !s.down.Load() }

// SetAvailable sets what Available reports.
func (s *StubInvoker) SetAvailable(ok bool) { s.down.Store(!ok) }

// Stats returns the invoker's statistics.
func (s *StubInvoker) Stats() *spi.Stats { return &s.stats }

// Calls returns how many times Invoke was called.
func (s *StubInvoker) Calls() int64 { return s.calls.Load() }

// Close does nothing.
func (s *StubInvoker) Close() error { return nil }

// StubDirectory is an spi.Directory over a fixed, replaceable invoker list.
// List returns the available invokers. Safe for concurrent use.
type StubDirectory struct {
	url      spi.URL
	registry string
	mu       sync.RWMutex
	invokers []spi.Invoker
}

// NewStubDirectory returns a directory for reference URL u whose providers
// come from registry (a description such as "memory://").
func NewStubDirectory(u spi.URL, registry string, invokers ...spi.Invoker) *StubDirectory {
	return &StubDirectory{url: u, registry: registry, invokers: invokers}
}

// URL returns the reference URL.
func (d *StubDirectory) URL() spi.URL { return d.url }

// Registry returns the registry description.
func (d *StubDirectory) Registry() string { return d.registry }

// Set replaces the invoker list.
func (d *StubDirectory) Set(invokers ...spi.Invoker) {
	d.mu.Lock()
	d.invokers = invokers
	d.mu.Unlock()
}

// List returns the available invokers (a new slice).
func (d *StubDirectory) List(*spi.Invocation) []spi.Invoker {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]spi.Invoker, 0, len(d.invokers))
	for _, x := range d.invokers {
		if x.Available() {
			out = append(out, x)
		}
	}
	return out
}

// clusterLB is the suite's balancer: round robin over the invokers whose
// "weight" is not "0"; nil when there are none.
type clusterLB struct{ n atomic.Uint64 }

func (b *clusterLB) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	k := int(b.n.Add(1))
	for i := range invokers {
		x := invokers[(k+i)%len(invokers)]
		if w, _ := x.URL().Param("weight"); w != "0" {
			return x
		}
	}
	return nil
}

// ClusterOptions tells TestCluster how many providers one Invoke of
// the cluster under test calls by design. The zero value is a cluster that
// calls one provider per attempt, as failover, failfast, failsafe and
// failback do, and forking does with forks=1.
type ClusterOptions struct {
	// Broadcast is set for a cluster that calls every available provider
	// with a positive weight once per Invoke, in sequence or at once, and
	// fails when any of them fails (Dubbo's BroadcastCluster). The suite
	// then checks that each provider is called exactly once, a
	// SERVICE_ERROR included, and that one failing provider fails the
	// call. Exclusive with Forks.
	Broadcast bool
	// Forks, when above 1, is set for a cluster that calls up to "forks"
	// distinct providers at once and returns the first success (Dubbo's
	// ForkingCluster): the suite builds it with forks=Forks and checks that
	// an Invoke calls between 1 and Forks providers, each at most once.
	// 0 or 1: one provider per attempt.
	Forks int
}

// TestCluster runs the cluster conformance suite against b, held to what
// the options say the cluster promises (at most one ClusterOptions; none:
// one provider per attempt). It builds the cluster from
// "airnode://127.0.0.1:20880/demo.Echo?retries=2&forks=N" (N is
// ClusterOptions.Forks, at least 1) and checks: the name; an empty
// directory and a directory whose providers all have weight 0 give an
// *spi.Error with StatusServiceNotFound naming the service key and the
// registry, and no provider of weight 0 is called; a success is returned
// as is; invokers of a non-comparable value type cause no panic; a
// SERVICE_ERROR is never retried: it reaches exactly one provider once
// (no options), every provider once (Broadcast), or at most Forks distinct
// providers once each (Forks), and comes back with its status (or as a
// zero Result, for a strategy that swallows errors); with Broadcast, one
// failing provider out of three fails the call and every provider is
// still called once; a done context ends the call promptly; concurrent
// Invokes are race-free. A panic of Build or Invoke fails the subtest with
// the panic's value and stack.
//
//	spitest.TestCluster(t, failover.Builder{})
//	spitest.TestCluster(t, broadcast.Builder{}, spitest.ClusterOptions{Broadcast: true})
func TestCluster(t *testing.T, b spi.ClusterBuilder, opts ...ClusterOptions) {
	t.Helper()
	defer catch(t, "cluster builder")
	var o ClusterOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		t.Fatalf("spitest: TestCluster takes at most one ClusterOptions, got %d", len(opts))
	}
	if o.Broadcast && o.Forks > 1 {
		t.Fatalf("spitest: ClusterOptions{Broadcast: true, Forks: %d}: a cluster broadcasts or forks, not both", o.Forks)
	}
	if o.Forks < 0 {
		t.Fatalf("spitest: ClusterOptions.Forks = %d: want 0 or more", o.Forks)
	}
	forks := max(o.Forks, 1)
	ref := spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:20880/demo.Echo?retries=2&forks=%d", forks))
	c, err := b.Build(ref)
	if err != nil {
		t.Fatalf("Build(%s): %v", ref, err)
	}
	provider := func(port int, params string, fn func(context.Context, *spi.Invocation) spi.Result) *StubInvoker {
		u := spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?%s", port, params))
		return NewStubInvoker(u, fn)
	}
	newInv := func() *spi.Invocation {
		return &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"x"}}
	}
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	notFound := func(t *testing.T, r spi.Result) {
		t.Helper()
		var e *spi.Error
		if !errors.As(r.Err, &e) || e.Status != spi.StatusServiceNotFound {
			t.Fatalf("want an *spi.Error with SERVICE_NOT_FOUND, got %v", r.Err)
		}
		if msg := e.Error(); !strings.Contains(msg, "demo.Echo") || !strings.Contains(msg, "memory://test") {
			t.Fatalf("error %q does not name the service key and the registry", msg)
		}
	}

	run(t, "EmptyDirectory", "cluster Invoke", func(t *testing.T) {
		dir := NewStubDirectory(ref, "memory://test")
		notFound(t, c.Invoke(ctx(t), newInv(), dir, &clusterLB{}))
	})
	run(t, "AllUnavailable", "cluster Invoke", func(t *testing.T) {
		p := provider(1, "", nil)
		p.SetAvailable(false)
		notFound(t, c.Invoke(ctx(t), newInv(), NewStubDirectory(ref, "memory://test", p), &clusterLB{}))
		if p.Calls() != 0 {
			t.Fatal("an unavailable provider was invoked")
		}
	})
	run(t, "AllWeightZero", "cluster Invoke", func(t *testing.T) {
		p1, p2 := provider(1, "weight=0", nil), provider(2, "weight=0", nil)
		notFound(t, c.Invoke(ctx(t), newInv(), NewStubDirectory(ref, "memory://test", p1, p2), &clusterLB{}))
		if p1.Calls()+p2.Calls() != 0 {
			t.Fatal("a provider with weight 0 was invoked")
		}
	})
	run(t, "Success", "cluster Invoke", func(t *testing.T) {
		ok := func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Value: "pong", Attachments: map[string]string{"k": "v"}}
		}
		ps := []*StubInvoker{provider(1, "", ok), provider(2, "", ok)}
		dir := NewStubDirectory(ref, "memory://test", ps[0], ps[1])
		r := c.Invoke(ctx(t), newInv(), dir, &clusterLB{})
		if r.Err != nil || r.Value != "pong" || r.Attachments["k"] != "v" {
			t.Fatalf("got %+v, want the provider's result", r)
		}
		clusterCheckCalls(t, o, "a successful call", ps)
	})
	run(t, "ServiceErrorNotRetried", "cluster Invoke", func(t *testing.T) {
		fail := func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
		}
		ps := []*StubInvoker{provider(1, "", fail), provider(2, "", fail), provider(3, "", fail)}
		dir := NewStubDirectory(ref, "memory://test", ps[0], ps[1], ps[2])
		r := c.Invoke(ctx(t), newInv(), dir, &clusterLB{})
		if r.Err != nil && spi.StatusOf(r.Err) != spi.StatusServiceError {
			t.Fatalf("got %v, want SERVICE_ERROR (or a swallowed error)", r.Err)
		}
		clusterCheckCalls(t, o, "SERVICE_ERROR", ps)
	})
	if o.Broadcast {
		run(t, "BroadcastOneFails", "cluster Invoke", func(t *testing.T) {
			fail := func(context.Context, *spi.Invocation) spi.Result {
				return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
			}
			ps := []*StubInvoker{provider(1, "", nil), provider(2, "", fail), provider(3, "", nil)}
			dir := NewStubDirectory(ref, "memory://test", ps[0], ps[1], ps[2])
			r := c.Invoke(ctx(t), newInv(), dir, &clusterLB{})
			if spi.StatusOf(r.Err) != spi.StatusServiceError {
				t.Fatalf("one of three providers failed SERVICE_ERROR; got %v, want that SERVICE_ERROR", r.Err)
			}
			clusterCheckCalls(t, o, "a call with one failing provider", ps)
		})
	}
	run(t, "NonComparableInvokers", "cluster Invoke", func(t *testing.T) {
		// Invokers of a value type holding a slice cannot be compared with
		// ==: excluding tried providers must not panic.
		var l []spi.Invoker
		for i := range 3 {
			u := spi.MustParse(fmt.Sprintf("airnode://127.0.1.%d:20880/demo.Echo", i+1))
			l = append(l, lbValueInvoker{url: u, tags: []string{"v"}, stats: &spi.Stats{}, err: spi.Errorf(spi.StatusChannelInactive, "closed")})
		}
		r := c.Invoke(ctx(t), newInv(), NewStubDirectory(ref, "memory://test", l...), &clusterLB{})
		if r.Err != nil && spi.StatusOf(r.Err) != spi.StatusChannelInactive {
			t.Fatalf("got %v, want CHANNEL_INACTIVE (or a swallowed error)", r.Err)
		}
	})
	run(t, "ContextDone", "cluster Invoke", func(t *testing.T) {
		block := func(ctx context.Context, _ *spi.Invocation) spi.Result {
			<-ctx.Done()
			return spi.Result{Err: spi.Errorf(spi.StatusClientTimeout, "cancelled: %w", ctx.Err())}
		}
		dir := NewStubDirectory(ref, "memory://test", provider(1, "", block), provider(2, "", block))
		cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		done := make(chan spi.Result, 1)
		guarded(t, "cluster Invoke", func() { done <- c.Invoke(cctx, newInv(), dir, &clusterLB{}) })
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Invoke did not return within 10s of its context ending")
		}
	})
	run(t, "Concurrent", "cluster Invoke", func(t *testing.T) {
		dir := NewStubDirectory(ref, "memory://test", provider(1, "", nil), provider(2, "", nil), provider(3, "", nil))
		lb := &clusterLB{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				defer catch(t, "cluster Invoke")
				for range 100 {
					if r := c.Invoke(context.Background(), newInv(), dir, lb); r.Err != nil {
						t.Error(r.Err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

// clusterCheckCalls fails t unless one Invoke reached the providers ps as
// o promises: one of them once, every one once (Broadcast), or between 1
// and Forks of them once each.
func clusterCheckCalls(t *testing.T, o ClusterOptions, what string, ps []*StubInvoker) {
	t.Helper()
	var total int64
	counts := make([]string, len(ps))
	for i, p := range ps {
		total += p.Calls()
		counts[i] = fmt.Sprintf("%s: %d", p.URL().Address(), p.Calls())
	}
	switch {
	case o.Broadcast:
		for _, p := range ps {
			if p.Calls() != 1 {
				t.Fatalf("%s reached the providers %d times (%s); want every provider once (ClusterOptions.Broadcast)",
					what, total, strings.Join(counts, ", "))
			}
		}
	case o.Forks > 1:
		for _, p := range ps {
			if p.Calls() > 1 {
				t.Fatalf("%s reached provider %s %d times (%s); want each provider at most once (ClusterOptions.Forks)",
					what, p.URL().Address(), p.Calls(), strings.Join(counts, ", "))
			}
		}
		if total < 1 || total > int64(o.Forks) {
			t.Fatalf("%s reached providers %d times (%s); want 1 to forks=%d (ClusterOptions.Forks)",
				what, total, strings.Join(counts, ", "), o.Forks)
		}
	default:
		if total != 1 {
			t.Fatalf("%s reached providers %d times (%s); want 1 (a cluster that calls every provider or several: ClusterOptions)",
				what, total, strings.Join(counts, ", "))
		}
	}
}

func clusterCheckName(name string) error {
	if name == "" || strings.ToLower(name) != name || strings.ContainsAny(name, " \t/") {
		return fmt.Errorf("cluster name %q: want a lowercase name", name)
	}
	return nil
}

// Interface guards.
var (
	_ spi.Invoker   = (*StubInvoker)(nil)
	_ spi.Directory = (*StubDirectory)(nil)
)

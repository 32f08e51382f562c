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

// TestCluster runs the cluster conformance suite against b. It builds the
// cluster from "airnode://127.0.0.1:20880/demo.Echo?retries=2&forks=1" (one
// fork, so that every strategy makes a single call per attempt) and checks:
// the name; an empty directory and a directory whose providers all have
// weight 0 give an *spi.Error with StatusServiceNotFound naming the service
// key and the registry; a success is returned as is; invokers of a
// non-comparable value type cause no panic; a SERVICE_ERROR reaches
// exactly one provider once and comes back with its status (or as a zero
// Result, for a strategy that swallows errors); a done context ends the
// call promptly; concurrent Invokes are race-free.
func TestCluster(t *testing.T, b spi.ClusterBuilder) {
	t.Helper()
	if err := clusterCheckName(b.Name()); err != nil {
		t.Fatal(err)
	}
	ref := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?retries=2&forks=1")
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

	t.Run("EmptyDirectory", func(t *testing.T) {
		dir := NewStubDirectory(ref, "memory://test")
		notFound(t, c.Invoke(ctx(t), newInv(), dir, &clusterLB{}))
	})
	t.Run("AllUnavailable", func(t *testing.T) {
		p := provider(1, "", nil)
		p.SetAvailable(false)
		notFound(t, c.Invoke(ctx(t), newInv(), NewStubDirectory(ref, "memory://test", p), &clusterLB{}))
		if p.Calls() != 0 {
			t.Fatal("an unavailable provider was invoked")
		}
	})
	t.Run("AllWeightZero", func(t *testing.T) {
		p1, p2 := provider(1, "weight=0", nil), provider(2, "weight=0", nil)
		notFound(t, c.Invoke(ctx(t), newInv(), NewStubDirectory(ref, "memory://test", p1, p2), &clusterLB{}))
		if p1.Calls()+p2.Calls() != 0 {
			t.Fatal("a provider with weight 0 was invoked")
		}
	})
	t.Run("Success", func(t *testing.T) {
		ok := func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Value: "pong", Attachments: map[string]string{"k": "v"}}
		}
		dir := NewStubDirectory(ref, "memory://test", provider(1, "", ok), provider(2, "", ok))
		r := c.Invoke(ctx(t), newInv(), dir, &clusterLB{})
		if r.Err != nil || r.Value != "pong" || r.Attachments["k"] != "v" {
			t.Fatalf("got %+v, want the provider's result", r)
		}
	})
	t.Run("ServiceErrorNotRetried", func(t *testing.T) {
		fail := func(context.Context, *spi.Invocation) spi.Result {
			return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "boom")}
		}
		ps := []*StubInvoker{provider(1, "", fail), provider(2, "", fail), provider(3, "", fail)}
		dir := NewStubDirectory(ref, "memory://test", ps[0], ps[1], ps[2])
		r := c.Invoke(ctx(t), newInv(), dir, &clusterLB{})
		if r.Err != nil && spi.StatusOf(r.Err) != spi.StatusServiceError {
			t.Fatalf("got %v, want SERVICE_ERROR (or a swallowed error)", r.Err)
		}
		if n := ps[0].Calls() + ps[1].Calls() + ps[2].Calls(); n != 1 {
			t.Fatalf("SERVICE_ERROR reached providers %d times, want 1", n)
		}
	})
	t.Run("NonComparableInvokers", func(t *testing.T) {
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
	t.Run("ContextDone", func(t *testing.T) {
		block := func(ctx context.Context, _ *spi.Invocation) spi.Result {
			<-ctx.Done()
			return spi.Result{Err: spi.Errorf(spi.StatusClientTimeout, "cancelled: %w", ctx.Err())}
		}
		dir := NewStubDirectory(ref, "memory://test", provider(1, "", block), provider(2, "", block))
		cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		done := make(chan spi.Result, 1)
		go func() { done <- c.Invoke(cctx, newInv(), dir, &clusterLB{}) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Invoke did not return within 10s of its context ending")
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		dir := NewStubDirectory(ref, "memory://test", provider(1, "", nil), provider(2, "", nil), provider(3, "", nil))
		lb := &clusterLB{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
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

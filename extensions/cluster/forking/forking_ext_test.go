package forking_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/cluster/forking"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestCluster(t, forking.Builder{}) }

// rr picks invokers in list order across calls.
type rr struct{ n atomic.Int64 }

func (b *rr) Select(l []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	return l[int(b.n.Add(1)-1)%len(l)]
}

func setup(t *testing.T, query string, fns ...func(context.Context, *spi.Invocation) spi.Result) (spi.Cluster, *spitest.StubDirectory, []*spitest.StubInvoker) {
	t.Helper()
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo" + query)
	c, err := forking.Builder{}.Build(ref)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*spitest.StubInvoker
	var l []spi.Invoker
	for i, fn := range fns {
		p := spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo", i+1)), fn)
		ps = append(ps, p)
		l = append(l, p)
	}
	return c, spitest.NewStubDirectory(ref, "memory://", l...), ps
}

// First success wins; the other forks' contexts are cancelled and their
// goroutines end (goleak checks at exit).
func TestFirstSuccessWinsOthersCancelled(t *testing.T) {
	var cancelled atomic.Int64
	block := func(ctx context.Context, _ *spi.Invocation) spi.Result {
		<-ctx.Done()
		cancelled.Add(1)
		return spi.Result{Err: spi.Errorf(spi.StatusClientTimeout, "cancelled: %w", ctx.Err())}
	}
	fast := func(_ context.Context, inv *spi.Invocation) spi.Result {
		time.Sleep(10 * time.Millisecond)
		*inv.Reply.(*string) = "winner"
		inv.SetAttachment("mine", "yes") // a fork's own copy: no race
		return spi.Result{Value: "fast"}
	}
	c, dir, ps := setup(t, "?forks=3", block, fast, block)
	var reply string
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Reply: &reply}
	start := time.Now()
	r := c.Invoke(context.Background(), inv, dir, &rr{})
	if r.Err != nil || r.Value != "fast" || reply != "winner" {
		t.Fatalf("got %+v, reply %q; want the fast provider's success", r, reply)
	}
	if inv.Attachment("mine") != "" {
		t.Fatal("a fork modified the caller's invocation")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for cancelled.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if cancelled.Load() != 2 {
		t.Fatalf("%d losing forks saw their context cancelled, want 2", cancelled.Load())
	}
	for _, p := range ps {
		if p.Calls() != 1 {
			t.Fatalf("provider %s called %d times, want once", p.URL().Address(), p.Calls())
		}
	}
}

func TestAllFail(t *testing.T) {
	fail := func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "no")}
	}
	c, dir, ps := setup(t, "", fail, fail, fail)
	r := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, &rr{})
	if spi.StatusOf(r.Err) != spi.StatusServiceError {
		t.Fatalf("got %v, want SERVICE_ERROR", r.Err)
	}
	if n := ps[0].Calls() + ps[1].Calls() + ps[2].Calls(); n != 2 {
		t.Fatalf("%d calls, want forks=2 (default)", n)
	}
}

func TestForksCappedByProviders(t *testing.T) {
	c, dir, ps := setup(t, "?forks=10&methods.Sleep.forks=1", nil, nil)
	c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, &rr{})
	// Invoke returns at the first success; the other fork may still be
	// starting.
	deadline := time.Now().Add(5 * time.Second)
	for ps[0].Calls()+ps[1].Calls() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a third call would show up by now
	if ps[0].Calls() != 1 || ps[1].Calls() != 1 {
		t.Fatalf("calls %d/%d, want each provider once", ps[0].Calls(), ps[1].Calls())
	}
	c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Sleep"}, dir, &rr{})
	if n := ps[0].Calls() + ps[1].Calls(); n != 3 {
		t.Fatalf("methods.Sleep.forks=1 made %d calls, want 1", n-2)
	}
}

func TestBuildErrors(t *testing.T) {
	for q, key := range map[string]string{"forks=0": "forks", "forks=x": "forks", "forks=101": "forks", "methods.Echo.forks=-1": "methods.Echo.forks", "Echo.forks=0": "Echo.forks"} {
		_, err := forking.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?" + q))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("%s: got %v, want a ParamError for key %s", q, err, key)
		}
	}
}

// Dubbo's "<m>.forks" applies to method m when the consumer URL has no
// "methods", as "<m>.timeout" does; other methods keep the service's forks.
func TestDubboMethodForksWithoutMethodsList(t *testing.T) {
	fail := func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "no")}
	}
	c, dir, ps := setup(t, "?forks=3&Slow.forks=1&heartbeat.retries=5", fail, fail, fail)
	total := func() int64 { return ps[0].Calls() + ps[1].Calls() + ps[2].Calls() }
	c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Slow"}, dir, &rr{})
	if n := total(); n != 1 {
		t.Fatalf("Slow.forks=1: Slow made %d calls, want 1", n)
	}
	c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, dir, &rr{})
	if n := total() - 1; n != 3 {
		t.Fatalf("Echo made %d calls, want forks=3", n)
	}
}

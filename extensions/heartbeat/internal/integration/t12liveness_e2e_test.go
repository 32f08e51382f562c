package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// t12Svc is the service of the kernel-level tests: Where names the
// provider, Sleep answers after ms milliseconds, whatever the deadline.
type t12Svc struct{ name string }

func (s t12Svc) Where(context.Context) (string, error) { return s.name, nil }

func (s t12Svc) Sleep(_ context.Context, ms int) (string, error) {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return s.name, nil
}

// t12Provider exports t12Svc named name from a node of its own and returns
// its address.
func t12Provider(t *testing.T, name string) string {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet),
		kernel.WithRegistry(spi.MustParse("memory://t12-"+name+"-"+fmt.Sprint(time.Now().UnixNano()))))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exp, err := n.Export(ctx, t12Svc{name: name}, spi.MustParse("airnode://127.0.0.1:0/t12.Svc?warmup=0&shutdown.wait=0"))
	if err != nil {
		t.Fatal(err)
	}
	return exp.URL().Address()
}

// t12Refer refers to t12.Svc at addrs (default heartbeat: idle, interval
// 60s) from a consumer node of its own.
func t12Refer(t *testing.T, query string, addrs ...string) *kernel.Reference {
	t.Helper()
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "airnode://" + addrs[0]
	for _, a := range addrs[1:] {
		u += "," + a
	}
	ref, err := n.Refer(ctx, spi.MustParse(u+"/t12.Svc?"+query), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// invokerAt returns ref's invoker of the provider at addr.
func invokerAt(t *testing.T, ref *kernel.Reference, addr string) spi.Invoker {
	t.Helper()
	for _, inv := range ref.Providers() {
		if inv.URL().Address() == addr {
			return inv
		}
	}
	t.Fatalf("no invoker for %s", addr)
	return nil
}

// t12Call is one call's outcome.
type t12Call struct {
	start, end time.Time
	where      string
	status     spi.Status // 0: OK
	err        error
}

// tester12 finding 2, as the user sees it: two providers A and B, the
// defaults (heartbeat idle, interval 60s; timeout 1s; failover;
// roundrobin, so that half the calls would go to A), 4 callers. A's
// packets are dropped (a TCP proxy that stops forwarding, no FIN, no
// RST). Its channel is closed within timeout + max(1 s, timeout) + 1 s =
// 3 s of the first SERVER_TIMEOUT — it took 243 s before — and every call
// started after that goes to B and succeeds.
func TestT12_BlackHoledProviderDroppedAndCallsGoToTheOther(t *testing.T) {
	t.Parallel()
	const timeout = time.Second // kernel.DefaultTimeout
	const bound = timeout + max(time.Second, timeout) + time.Second
	addrA, addrB := t12Provider(t, "A"), t12Provider(t, "B")
	px := testproxy.New(t, addrA)
	ref := t12Refer(t, "loadbalance=roundrobin", px.Addr(), addrB)
	ctx := context.Background()
	seen := map[string]bool{}
	for deadline := time.Now().Add(5 * time.Second); !seen["A"] || !seen["B"]; {
		if time.Now().After(deadline) {
			t.Fatalf("calls reached %v within 5 s, want A and B", seen)
		}
		var where string
		if err := ref.Call(ctx, "Where", nil, &where); err != nil {
			t.Fatal(err)
		}
		seen[where] = true
	}
	invA := invokerAt(t, ref, px.Addr())

	var mu sync.Mutex
	var calls []t12Call
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-quit:
					return
				default:
				}
				c := t12Call{start: time.Now()}
				c.err = ref.Call(ctx, "Where", nil, &c.where)
				c.end = time.Now()
				if c.err != nil {
					c.status = spi.StatusOf(c.err)
				}
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	defer func() { close(quit); wg.Wait() }()
	time.Sleep(200 * time.Millisecond)
	px.BlackHole()
	hole := time.Now()
	for invA.Available() {
		if time.Since(hole) > 10*time.Second {
			t.Fatal("black-holed provider still available after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	dropped := time.Now()
	time.Sleep(1500 * time.Millisecond)
	close(quit)
	wg.Wait()
	quit = make(chan struct{})

	var first time.Time
	var failed, afterDrop, failedAfter, toAAfter int
	for _, c := range calls {
		if c.status == spi.StatusServerTimeout && (first.IsZero() || c.end.Before(first)) {
			first = c.end
		}
		if c.err != nil {
			failed++
		}
		if c.start.After(dropped) {
			afterDrop++
			switch {
			case c.err != nil:
				failedAfter++
				t.Errorf("call started %v after A was dropped failed: %v", c.start.Sub(dropped).Round(time.Millisecond), c.err)
			case c.where != "B":
				toAAfter++
			}
		}
	}
	if first.IsZero() {
		t.Fatal("no call failed SERVER_TIMEOUT: was A black-holed?")
	}
	took := dropped.Sub(first)
	t.Logf("black hole → first SERVER_TIMEOUT %v → A dropped %v later; %d of %d calls failed, all before the drop; %d calls after it, all to B",
		first.Sub(hole).Round(time.Millisecond), took.Round(time.Millisecond), failed, len(calls), afterDrop)
	if took > bound {
		t.Errorf("A dropped %v after the first SERVER_TIMEOUT, want within timeout + max(1s, timeout) + 1s = %v", took, bound)
	}
	if toAAfter != 0 {
		t.Errorf("%d calls reached A after it was dropped", toAAfter)
	}
	if afterDrop < 20 {
		t.Errorf("only %d calls in the 1.5 s after the drop", afterDrop)
	}
}

// A provider that is merely slow (Sleep past the timeout; the kernel's
// provider answers pings while the method runs) stays in rotation: its
// calls fail SERVER_TIMEOUT, the liveness check's ping is answered, the
// connection is never closed, and a quick call afterwards succeeds on it.
func TestT12_SlowProviderStaysAvailable(t *testing.T) {
	t.Parallel()
	addr := t12Provider(t, "slow")
	ref := t12Refer(t, "timeout=300ms", addr)
	ctx := context.Background()
	var where string
	if err := ref.Call(ctx, "Where", nil, &where); err != nil {
		t.Fatal(err)
	}
	inv := invokerAt(t, ref, addr)
	for range 6 {
		err := ref.Call(ctx, "Sleep", []any{1000}, &where)
		if spi.StatusOf(err) != spi.StatusServerTimeout {
			t.Fatalf("Sleep(1000) with timeout 300ms: %v, want SERVER_TIMEOUT", err)
		}
		if !inv.Available() {
			t.Fatal("slow provider dropped")
		}
	}
	time.Sleep(1200 * time.Millisecond) // a check's ping, had it failed, would have closed by now
	if !inv.Available() {
		t.Fatal("slow provider dropped")
	}
	if up, _ := ref.Connections(); up != 1 {
		t.Fatalf("%d connections up, want 1", up)
	}
	if err := ref.Call(ctx, "Where", nil, &where); err != nil {
		t.Fatalf("quick call after the slow ones: %v", err)
	}
}

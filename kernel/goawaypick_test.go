package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// tester43: a provider that said go-away (its drain ended; it runs no new
// call on the connection) is left out of selection, retries never go back
// to it, and when every provider said it a call fails once, at once, with
// CHANNEL_INACTIVE and spi.ErrGoAway naming them. Before, a reference
// whose only provider had said go-away made three attempts at it per call
// (retries=2), each failing at once: "failover: demo.Echo.Sleep failed
// after 3 attempts on [A (3 times)]", about 10,000 calls failed that way
// in 0.4 s by 8 callers in a loop.

// invokerOf returns r's provider invoker for e, under its per-provider
// filters if it has any.
func invokerOf(t *testing.T, r *Reference, e *Exporter) *remoteInvoker {
	t.Helper()
	for _, inv := range r.dir.All() {
		if inv.URL().Address() == e.URL().Address() {
			for {
				f, ok := inv.(*filterInvoker)
				if !ok {
					break
				}
				inv = f.Invoker
			}
			return inv.(*remoteInvoker)
		}
	}
	t.Fatalf("no provider invoker for %s", e.URL().Address())
	return nil
}

// attempts is how many calls inv began: ended ones and those running.
func attempts(inv *remoteInvoker) int64 { return inv.Stats().Total() + inv.Stats().Active() }

// goneAway reports whether inv's first channel got its provider's go-away.
func goneAway(inv *remoteInvoker) bool {
	st := inv.conns[0].state.Load()
	if st == nil || st.ch == nil {
		return false
	}
	ch, ok := st.ch.(*exchange.Channel)
	return ok && ch.GoneAway()
}

// drainHeldOpen shuts p down (in the background, its error on the
// returned channel) so that its go-away goes out and its channels then
// stay open for about hold: a call in flight as the drain begins makes
// the drain wait for it, and a call of hold sent during the drain (after
// the read-only event) runs after the go-away, the exchange's Shutdown
// waiting for it before it closes the channels. Both go through a
// reference of their own, so the caller's reference sends nothing. It
// returns once every invoker of watch saw the go-away.
func drainHeldOpen(t *testing.T, p *Node, e *Exporter, hold time.Duration, watch ...*remoteInvoker) <-chan error {
	t.Helper()
	own := referConnected(t, "timeout=10s&retries=0", e)
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { _, err := own.Invoke(context.Background(), "Sleep", 300); first <- err }()
	eventually(t, "the first call running", func() bool { return e.srv.srv.InFlight() == 1 })
	// Taken before the drain begins: once the provider has said it is
	// draining, Providers() no longer lists it (a clean-clone CI found
	// it empty here).
	oi := own.Providers()[0].(*remoteInvoker)
	down := make(chan error, 1)
	go func() { down <- p.Shutdown(context.Background()) }()
	eventually(t, "the read-only event", func() bool {
		st := oi.conns[0].state.Load()
		ro, ok := st.ch.(interface{ ReadOnly() bool })
		return ok && ro.ReadOnly()
	})
	go func() { _, err := own.Invoke(context.Background(), "Sleep", int(hold/time.Millisecond)); second <- err }()
	eventually(t, "the go-away", func() bool {
		for _, w := range watch {
			if !goneAway(w) {
				return false
			}
		}
		return true
	})
	t.Cleanup(func() {
		if err := <-first; err != nil {
			t.Errorf("the call in flight as the drain began: %v; want it run", err)
		}
		if err := <-second; err != nil {
			t.Errorf("the call read during the drain: %v; want it run", err)
		}
	})
	return down
}

// With two providers and one of them draining, calls in a loop with
// failover retries=2 never fail and never go to the draining provider
// once its go-away arrived.
func TestGoAwayProviderLeftOutOfSelection(t *testing.T) {
	pa, ea := provider(t)
	_, eb := provider(t)
	r := referConnected(t, "retries=2&loadbalance=roundrobin&timeout=5s", ea, eb)
	ia := invokerOf(t, r, ea)

	load := startEchoLoad(r, 8)
	t.Cleanup(load.end)
	calls, failed := &load.calls, &load.failed
	eventually(t, "calls on both providers", func() bool { return attempts(ia) > 10 && calls.Load() > 20 })
	down := drainHeldOpen(t, pa, ea, 700*time.Millisecond, ia)
	atGoAway := attempts(ia)
	callsAtGoAway := calls.Load()
	if err := <-down; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	// calls after A's channel closed too: 50 or more after the go-away,
	// however slow a loaded machine makes them (a fixed 100 ms before)
	for end := time.Now().Add(10 * time.Second); calls.Load()-callsAtGoAway < 50 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	load.end()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d calls failed; first: %v", n, calls.Load(), load.firstErr.Load())
	}
	if after := attempts(ia) - atGoAway; after != 0 {
		t.Errorf("%d attempts at the provider after its go-away; want 0", after)
	}
	if calls.Load()-callsAtGoAway < 50 {
		t.Errorf("only %d calls after the go-away: the test measured nothing", calls.Load()-callsAtGoAway)
	}
	t.Logf("%d calls, %d after A's go-away; attempts at A: %d before, %d after", calls.Load(), calls.Load()-callsAtGoAway, atGoAway, attempts(ia)-atGoAway)
}

// When every provider said go-away (one, or both of two), each call
// fails at once with CHANNEL_INACTIVE and spi.ErrGoAway naming them, and
// makes no attempt at them: one failure per call, no retries. A provider
// back on its address (a new connection, no go-away) takes calls again.
// The two providers are called through a per-provider filter
// (activelimit), which wraps their invokers.
func TestGoAwayEveryProviderFailsOnceAndComesBack(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(map[int]string{1: "only provider", 2: "both providers, wrapped"}[n], func(t *testing.T) {
			var ps []*Node
			var es []*Exporter
			var addrs []string
			for range n {
				p, e := provider(t)
				ps, es, addrs = append(ps, p), append(es, e), append(addrs, e.URL().Address())
			}
			query := "retries=2&timeout=5s&reconnect.backoff=50ms"
			if n == 2 {
				query += "&actives=1000"
			}
			r := refer(t, consumer(t), "airnode://"+strings.Join(addrs, ",")+"/demo.Echo?"+query)
			eventually(t, "every provider connected", func() bool {
				return len(r.Providers()) == n && anyAvailable(r.Providers()) && len(r.dir.List(&spi.Invocation{})) == n
			})
			var invs []*remoteInvoker
			for _, e := range es {
				invs = append(invs, invokerOf(t, r, e))
			}
			if _, wrapped := r.dir.All()[0].(*filterInvoker); wrapped != (n == 2) {
				t.Fatalf("invoker wrapped by a filter: %v; want %v", wrapped, n == 2)
			}
			// the first provider's drain is held open; the second's (if
			// any) is started once the first's go-away has arrived, and
			// held open too. The first's is held 2 s longer: it must
			// outlast the second's set-up (a reference, a first call, a
			// drain to its go-away), over a second on a loaded machine.
			var downs []<-chan error
			for i := range n {
				hold := time.Second + time.Duration(n-1-i)*2*time.Second
				downs = append(downs, drainHeldOpen(t, ps[i], es[i], hold, invs[i]))
			}
			before := make([]int64, n)
			for i, inv := range invs {
				before[i] = attempts(inv)
			}
			want := "the only provider of demo.Echo (" + es[0].URL().Address() + ") said go-away"
			if n == 2 {
				all := r.dir.All() // in the directory's order
				want = "all 2 providers of demo.Echo (" + all[0].URL().Address() + ", " + all[1].URL().Address() + ") said go-away"
			}
			const calls = 200
			start := time.Now()
			for i := range calls {
				_, err := r.Invoke(context.Background(), "Echo", i)
				if spi.StatusOf(err) != spi.StatusChannelInactive || !errors.Is(err, spi.ErrGoAway) || !strings.Contains(err.Error(), want) {
					t.Fatalf("call %d: %v; want CHANNEL_INACTIVE, errors.Is spi.ErrGoAway, %q", i, err, want)
				}
				if i == 0 {
					t.Logf("the error: %v", err)
				}
			}
			took := time.Since(start)
			for i, inv := range invs {
				if !goneAway(inv) {
					t.Fatalf("provider %d's channel closed during the calls: the test measured nothing", i)
				}
				if d := attempts(inv) - before[i]; d != 0 {
					t.Errorf("provider %s: %d attempts by %d calls after its go-away; want 0", inv.addr, d, calls)
				}
			}
			// each fails at once: microseconds; the bound is for a loaded machine
			if took > 2*time.Second {
				t.Errorf("%d calls took %v; want each to fail at once", calls, took)
			}
			t.Logf("%d calls failed in %v, no attempt at the providers", calls, took.Round(time.Microsecond))

			for _, d := range downs {
				if err := <-d; err != nil {
					t.Errorf("Shutdown = %v", err)
				}
			}
			// the first provider comes back on its address: a new
			// connection without go-away, picked again
			addr := es[0].URL().Address()
			p2 := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = p2.Close() })
			if _, err := p2.Export(ctxT(t), demo.New("p2", 100), spi.MustParse("airnode://"+addr+"/demo.Echo")); err != nil {
				t.Fatal(err)
			}
			eventually(t, "a call answered by the provider back on "+addr, func() bool {
				_, err := r.Invoke(ctxT(t), "Echo", "back")
				return err == nil
			})
			if invs[0].GoingAway() || !invs[0].Available() {
				t.Errorf("the provider back on %s: GoingAway %v, Available %v; want false, true", addr, invs[0].GoingAway(), invs[0].Available())
			}
		})
	}
}

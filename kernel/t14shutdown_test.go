package kernel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/spi"
)

// t14Inventory is the downstream service of t14Orders, exported by the
// same node.
type t14Inventory struct{}

func (t14Inventory) Reserve(ctx context.Context, sku string) (string, error) {
	return "reserved " + sku, nil
}

// t14Orders calls t14Inventory through its node's own registry
// reference, as tester14's shop.Orders does. Place("wait") tells started
// and waits for release before its downstream call.
type t14Orders struct {
	inv     *Reference
	started chan struct{}
	release chan struct{}
}

func (o *t14Orders) Place(ctx context.Context, id string) (string, error) {
	if id == "wait" {
		o.started <- struct{}{}
		select {
		case <-o.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	var s string
	if err := o.inv.Call(ctx, "Reserve", []any{id}, &s); err != nil {
		return "", err
	}
	return s, nil
}

// TestT14_3_OwnProvidersListedWhileDraining: a node that exports
// t14.Inventory and t14.Orders, Orders calling Inventory through the
// node's own registry reference, keeps calling its own Inventory while it
// drains at Shutdown (tester14 finding 3): the call in flight that goes
// downstream once Shutdown began (in the drain, after shutdown.wait), and
// a call another consumer sends during shutdown.wait, both succeed; other
// consumers no longer see the provider in the registry.
func TestT14_3_OwnProvidersListedWhileDraining(t *testing.T) {
	for _, reg := range []string{"memory://t14-3", "file://" + t.TempDir() + "?poll=50ms"} {
		t.Run(spi.MustParse(reg).Scheme(), func(t *testing.T) { testOwnProvidersWhileDraining(t, reg) })
	}
}

func testOwnProvidersWhileDraining(t *testing.T, registry string) {
	ctx := ctxT(t)
	cat := testCatalogs(t)
	const wait = 800 * time.Millisecond
	a := NewNode(cat, WithLogger(quiet), WithRegistry(spi.MustParse(registry)),
		WithShutdownWait(wait), WithShutdownTimeout(5*time.Second))
	defer a.Close()
	if _, err := a.Export(ctx, t14Inventory{}, spi.MustParse("airnode://127.0.0.1:0/t14.Inventory")); err != nil {
		t.Fatal(err)
	}
	inv, err := a.Refer(ctx, spi.MustParse("airnode:///t14.Inventory?timeout=3s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	orders := &t14Orders{inv: inv, started: make(chan struct{}, 1), release: make(chan struct{})}
	oe, err := a.Export(ctx, orders, spi.MustParse("airnode://127.0.0.1:0/t14.Orders"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node's own Inventory provider listed", func() bool { return len(inv.Providers()) == 1 })

	b := NewNode(cat, WithLogger(quiet), WithRegistry(spi.MustParse(registry)))
	defer b.Close()
	viaRegistry, err := b.Refer(ctx, spi.MustParse("airnode:///t14.Orders?timeout=8s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := b.Refer(ctx, spi.MustParse("airnode://"+oe.URL().Address()+"/t14.Orders?timeout=3s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	// Empty protection off: with it (the default) b would keep calling
	// its only Inventory provider until that one's go-away at the end of
	// shutdown.wait (TestT22_EmptyProtection); this test watches the
	// unregistration.
	bInv, err := b.Refer(ctx, spi.MustParse("airnode:///t14.Inventory?timeout=3s&registry.empty.protection=false"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the consumer's Orders provider listed", func() bool { return len(viaRegistry.Providers()) == 1 })
	eventually(t, "the consumer's Inventory provider listed", func() bool { return len(bInv.Providers()) == 1 })

	inFlight := make(chan error, 1)
	go func() {
		var s string
		err := viaRegistry.Call(ctx, "Place", []any{"wait"}, &s)
		if err == nil && s != "reserved wait" {
			err = fmt.Errorf("reply %q", s)
		}
		inFlight <- err
	}()
	select {
	case <-orders.started:
	case <-ctx.Done():
		t.Fatal("Place did not start")
	}
	begun := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- a.Shutdown(ctx) }()

	// The registry no longer lists the node's providers: other consumers
	// stop picking them.
	eventually(t, "Inventory unregistered, as another consumer sees it", func() bool { return len(bInv.Providers()) == 0 })
	if d := time.Since(begun); d > wait/2 {
		t.Logf("unregistering took %v (shutdown.wait %v): the call below may fall after the wait", d, wait)
	}
	// During shutdown.wait another consumer's call still reaches the node
	// and goes downstream to the node's own Inventory.
	var s string
	if err := direct.Call(ctx, "Place", []any{"now"}, &s); err != nil || s != "reserved now" {
		t.Errorf("call from another consumer during shutdown.wait: %q, %v", s, err)
	}
	// The call in flight goes downstream during the drain (after the wait).
	time.Sleep(time.Until(begun.Add(wait + 150*time.Millisecond)))
	close(orders.release)
	if err := <-inFlight; err != nil {
		t.Errorf("call in flight that went downstream during the drain: %v", err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	// The node's own references are closed with it.
	if _, err := inv.Invoke(ctx, "Reserve", "x"); !errors.Is(err, ErrReferenceClosed) {
		t.Errorf("call after Shutdown: %v, want ErrReferenceClosed", err)
	}
}

// t14Stuck's Block ignores its context: it returns when release closes.
type t14Stuck struct {
	started chan struct{}
	release chan struct{}
}

func (s *t14Stuck) Block(ctx context.Context) (string, error) {
	s.started <- struct{}{}
	<-s.release
	return "late", nil
}

// TestT14_9_AbandonedCallLeavesOnlyItsGoroutine: after Shutdown abandons
// a call whose method ignores its context, the only goroutine left is the
// method's (tester14 finding 9: the server's drain waiter, the exchange's
// closeAll and the channel's supervisor stayed until the method
// returned), with each dispatcher; once the method returns, nothing is
// left.
func TestT14_9_AbandonedCallLeavesOnlyItsGoroutine(t *testing.T) {
	for _, dispatcher := range Dispatchers() {
		t.Run(dispatcher, func(t *testing.T) {
			base := goleak.IgnoreCurrent()
			ctx := ctxT(t)
			cat := testCatalogs(t)
			p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
			stuck := &t14Stuck{started: make(chan struct{}, 1), release: make(chan struct{})}
			released := false
			defer func() {
				if !released {
					close(stuck.release)
				}
			}()
			e, err := p.Export(ctx, stuck, spi.MustParse("airnode://127.0.0.1:0/t14.Stuck?dispatcher="+dispatcher))
			if err != nil {
				t.Fatal(err)
			}
			c := NewNode(cat, WithLogger(quiet))
			r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/t14.Stuck?timeout=5s"), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			call := make(chan error, 1)
			go func() { _, err := r.Invoke(ctx, "Block"); call <- err }()
			<-stuck.started
			now, cancel := context.WithCancel(ctx)
			cancel()
			var abandoned *AbandonedError
			if err := p.Shutdown(now); !errors.As(err, &abandoned) || abandoned.Calls != 1 {
				t.Fatalf("Shutdown: %v, want 1 abandoned call", err)
			}
			if err := <-call; err == nil {
				t.Error("the abandoned call succeeded")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			// Only the method's goroutine is left (goleak retries for
			// goroutines on their way out).
			if err := goleak.Find(base, goleak.IgnoreAnyFunction("github.com/airnode/airnode/kernel.(*t14Stuck).Block")); err != nil {
				t.Errorf("besides the method's, goroutines left after Shutdown returned: %v", err)
			}
			close(stuck.release)
			released = true
			if err := goleak.Find(base); err != nil {
				t.Errorf("goroutines left after the method returned: %v", err)
			}
		})
	}
}

// TestT14_10_NoProviderAfterUnexportSaysItLeft: after Unexport, on a
// memory:// registry the two nodes share (one catalog set), "no
// provider" says the provider the reference saw has left the registry,
// not that the nodes may not share the registry (tester14 finding 10);
// a reference that never saw a provider keeps that hint.
func TestT14_10_NoProviderAfterUnexportSaysItLeft(t *testing.T) {
	const memoryHint = "a memory:// registry is shared only by the nodes built from one catalog set"
	ctx := ctxT(t)
	cat := testCatalogs(t)
	reg := WithRegistry(spi.MustParse("memory://t14-10"))
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), reg)
	defer p.Close()
	e, err := p.Export(ctx, t14Inventory{}, spi.MustParse("airnode://127.0.0.1:0/t14.Inventory"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet), reg)
	defer c.Close()
	// Empty protection off: with it (the default) the reference keeps
	// its only provider, still connected, after Unexport (and gets its
	// SERVICE_NOT_FOUND answer).
	r, err := c.Refer(ctx, spi.MustParse("airnode:///t14.Inventory?timeout=3s&registry.empty.protection=false"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctx, "Reserve", "a"); err != nil {
		t.Fatal(err)
	}
	if err := e.Unexport(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider dropped", func() bool { return len(r.Providers()) == 0 })
	_, err = r.Invoke(ctx, "Reserve", "a")
	want := e.URL().Address() + " was listed and has left the registry"
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), memoryHint) {
		t.Errorf("call after Unexport: %v\nwant SERVICE_NOT_FOUND saying %q, without %q", err, want, memoryHint)
	}

	// Exported again: the call succeeds, and the line goes with the next
	// provider.
	if _, err := p.Export(ctx, t14Inventory{}, spi.MustParse("airnode://"+e.URL().Address()+"/t14.Inventory")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the provider back", func() bool { return len(r.Providers()) == 1 })
	if _, err := r.Invoke(ctx, "Reserve", "a"); err != nil {
		t.Errorf("call after re-export: %v", err)
	}

	// A reference that never saw a provider of its service keeps the hint.
	never, err := c.Refer(ctx, spi.MustParse("airnode:///t14.Nobody?timeout=3s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := never.Invoke(ctx, "M"); err == nil || !strings.Contains(err.Error(), memoryHint) {
		t.Errorf("call of a service never exported: %v, want the hint %q", err, memoryHint)
	}
}

// TestT14_11_ExportNeedsAnAddress: Export refuses a URL with neither
// host nor port (airnode:///t14.Inventory would listen on every
// interface on a port the system picks), naming the forms allowed, and
// listens on nothing; a loopback host with port 0, or with no port (the
// URL cannot tell them apart), gets a free port (tester14 finding 11).
func TestT14_11_ExportNeedsAnAddress(t *testing.T) {
	ctx := ctxT(t)
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer n.Close()
	_, err := n.Export(ctx, t14Inventory{}, spi.MustParse("airnode:///t14.Inventory?weight=5"))
	for _, want := range []string{"kernel: export t14.Inventory: airnode:///t14.Inventory names no address to listen on", "want host:port", "port 0 picks a free port", "0.0.0.0 listens on every interface"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Export(airnode:///t14.Inventory) = %v, want an error saying %q", err, want)
		}
	}
	n.mu.Lock()
	servers := len(n.servers)
	n.mu.Unlock()
	if servers != 0 {
		t.Errorf("a refused Export left %d servers", servers)
	}
	for _, u := range []string{"airnode://127.0.0.1:0/t14.Inventory", "airnode://127.0.0.1/t14.Orders"} {
		e, err := n.Export(ctx, t14Inventory{}, spi.MustParse(u))
		if err != nil {
			t.Errorf("Export(%s): %v", u, err)
			continue
		}
		if e.URL().Host() != "127.0.0.1" || e.URL().Port() == 0 {
			t.Errorf("Export(%s) published %s, want 127.0.0.1 and the port it got", u, e.URL())
		}
	}
}

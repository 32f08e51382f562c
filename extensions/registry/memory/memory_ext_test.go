package memory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	b := memory.NewBuilder()
	spitest.TestRegistry(t, func(t *testing.T) spi.Registry {
		r, err := b.Build(spi.MustParse("memory://"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

func TestNamespacesAreSeparate(t *testing.T) {
	b := memory.NewBuilder()
	ra, _ := b.Build(spi.MustParse("memory://a"))
	rb, _ := b.Build(spi.MustParse("memory://b"))
	defer ra.Close()
	defer rb.Close()
	p := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	if err := ra.Register(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if got, _ := rb.Lookup(context.Background(), p); len(got) != 0 {
		t.Fatalf("namespace b sees %v", got)
	}
	if got, _ := ra.Lookup(context.Background(), p); len(got) != 1 {
		t.Fatalf("namespace a sees %v", got)
	}
}

func TestBuildRejectsParameters(t *testing.T) {
	if _, err := memory.NewBuilder().Build(spi.MustParse("memory://?x=1")); err == nil {
		t.Fatal("want error for unknown key")
	}
	if _, err := memory.NewBuilder().Build(spi.MustParse("file:///tmp")); err == nil {
		t.Fatal("want error for wrong scheme")
	}
}

// memory:// reaches the consumers of its own process only; airnode serve
// warns about it (spi.RegistryReacher).
func TestReachIsProcess(t *testing.T) {
	if got := (&memory.Builder{}).Reach(); got != spi.ReachProcess {
		t.Errorf("Reach() = %v, want process", got)
	}
}

// Register and Unregister return once the subscribers of the service key
// have applied the new list (tester10: a call right after Export found
// no provider, the push being still on its way), even when applying it
// takes a while; a notify that blocks costs Register no more than ctx.
func TestRegisterReturnsAfterSubscribersHaveTheList(t *testing.T) {
	b := memory.NewBuilder()
	prov, _ := b.Build(spi.MustParse("memory://late"))
	cons, _ := b.Build(spi.MustParse("memory://late"))
	defer prov.Close()
	defer cons.Close()
	p := spi.MustParse("airnode://127.0.0.1:1/demo.Echo")
	var mu sync.Mutex
	var last []spi.URL
	sub, err := cons.Subscribe(context.Background(), spi.MustParse("airnode:///demo.Echo"), func(l []spi.URL) {
		time.Sleep(20 * time.Millisecond) // a slow subscriber
		mu.Lock()
		last = l
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	for i := range 3 {
		if err := prov.Register(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(last)
		mu.Unlock()
		if n != 1 {
			t.Fatalf("round %d: after Register the subscriber has %d providers, want 1", i, n)
		}
		if err := prov.Unregister(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n = len(last)
		mu.Unlock()
		if n != 0 {
			t.Fatalf("round %d: after Unregister the subscriber has %d providers, want 0", i, n)
		}
	}

	// a notify that blocks: Register returns when ctx ends, nil
	release := make(chan struct{})
	blocked, err := cons.Subscribe(context.Background(), spi.MustParse("airnode:///demo.Blocked"), func(l []spi.URL) {
		if len(l) > 0 {
			<-release
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer blocked.Stop()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := prov.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Blocked")); err != nil {
		t.Fatalf("Register with a blocked subscriber: %v", err)
	}
}

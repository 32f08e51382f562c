package directory_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// watchedInvoker is a provider invoker whose availability changes only
// with a Bump of its epoch (directory.Watched), as the kernel's do; asked
// counts its Available calls.
type watchedInvoker struct {
	fakeInvoker
	epoch *directory.Epoch
	asked atomic.Int64
}

func (w *watchedInvoker) Available() bool {
	w.asked.Add(1)
	return w.fakeInvoker.Available()
}

func (w *watchedInvoker) AvailabilityEpoch() *directory.Epoch { return w.epoch }

// set makes w available or not, then bumps its epoch (the order the
// kernel keeps: the change first, then the bump).
func (w *watchedInvoker) set(up bool) {
	w.available.Store(up)
	w.epoch.Bump()
}

type watchedFactory struct {
	epoch *directory.Epoch // shared by every invoker; nil: each its own nil (not watched)
	mu    sync.Mutex
	made  map[string]*watchedInvoker // address -> invoker
}

func (f *watchedFactory) newInvoker(u spi.URL) (spi.Invoker, error) {
	inv := &watchedInvoker{fakeInvoker: fakeInvoker{url: u}, epoch: f.epoch}
	inv.available.Store(true)
	f.mu.Lock()
	if f.made == nil {
		f.made = map[string]*watchedInvoker{}
	}
	f.made[u.Address()] = inv
	f.mu.Unlock()
	return inv, nil
}

func (f *watchedFactory) get(addr string) *watchedInvoker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.made[addr]
}

func watchedSetup(t *testing.T, epoch *directory.Epoch, providers int) (*directory.Directory, *watchedFactory) {
	t.Helper()
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	f := &watchedFactory{epoch: epoch}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", f.newInvoker, nil)
	t.Cleanup(func() { _ = d.Close() })
	for i := 1; i <= providers; i++ {
		register(t, reg, "airnode://127.0.0.1:"+strconv.Itoa(i)+"/demo.Echo?side=provider")
	}
	start(t, d)
	waitLen(t, d, providers)
	return d, f
}

func listed(d *directory.Directory, addr string) bool {
	for _, inv := range d.List(nil) {
		if inv.URL().Address() == addr {
			return true
		}
	}
	return false
}

// A provider whose connection drops is left out by the first List after
// its epoch's bump, and taken back after the bump that says it is up
// again; between changes List asks no invoker (the per-call cost does
// not grow with the providers: tester22 finding 6).
func TestT22_ListFollowsAvailabilityChanges(t *testing.T) {
	epoch := &directory.Epoch{}
	d, f := watchedSetup(t, epoch, 3)
	b := f.get("127.0.0.1:2")

	d.List(nil)
	before := b.asked.Load()
	for range 100 {
		if n := len(d.List(nil)); n != 3 {
			t.Fatalf("List has %d invokers, want 3", n)
		}
	}
	if n := b.asked.Load() - before; n != 0 {
		t.Fatalf("Available asked %d times over 100 Lists with no change, want 0", n)
	}

	b.set(false) // its connection dropped
	if listed(d, "127.0.0.1:2") {
		t.Fatal("127.0.0.1:2 listed after its connection dropped")
	}
	if n := len(d.List(nil)); n != 2 {
		t.Fatalf("List has %d invokers, want 2", n)
	}
	// A call picks among the listed ones only: the dropped one never.
	lb, _ := random.Builder{}.Build(spi.URL{})
	for range 200 {
		if x := lb.Select(d.List(nil), nil); x.URL().Address() == "127.0.0.1:2" {
			t.Fatal("picked the provider whose connection dropped")
		}
	}

	b.set(true) // reconnected
	if !listed(d, "127.0.0.1:2") {
		t.Fatal("127.0.0.1:2 not listed after it reconnected")
	}
	// Picked again, within a bounded number of picks (1/3 each).
	picked := false
	for i := 0; i < 2000 && !picked; i++ {
		picked = lb.Select(d.List(nil), nil).URL().Address() == "127.0.0.1:2"
	}
	if !picked {
		t.Fatal("the reconnected provider was not picked in 2000 picks")
	}
}

// A change made while another goroutine builds the list is never lost:
// after each change's bump, List reflects it, whatever the concurrent
// Lists did (run with -race).
func TestT22_ChangeDuringBuildIsNotLost(t *testing.T) {
	epoch := &directory.Epoch{}
	d, f := watchedSetup(t, epoch, 8)
	x := f.get("127.0.0.1:5")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 { // Lists racing with the changes
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				d.List(nil)
			}
		}()
	}
	for i := range 2000 {
		up := i%2 == 1
		x.set(up)
		if got := listed(d, "127.0.0.1:5"); got != up {
			cancel()
			wg.Wait()
			t.Fatalf("change %d: listed %v after the provider became available=%v", i, got, up)
		}
	}
	cancel()
	wg.Wait()
}

// Invokers that are not Watched (or whose epoch is nil) are asked on
// every List, as before: a change needs no bump.
func TestT22_UnwatchedInvokersAskedEveryList(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) (*directory.Directory, func(up bool))
	}{
		{"plain invokers", func(t *testing.T) (*directory.Directory, func(bool)) {
			reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
			register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
			register(t, reg, "airnode://127.0.0.1:2/demo.Echo?side=provider")
			start(t, d)
			waitLen(t, d, 2)
			inv := f.byAddress("127.0.0.1:2")[0]
			return d, func(up bool) { inv.available.Store(up) }
		}},
		{"nil epoch", func(t *testing.T) (*directory.Directory, func(bool)) {
			d, f := watchedSetup(t, nil, 2)
			inv := f.get("127.0.0.1:2")
			return d, func(up bool) { inv.available.Store(up) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, set := tc.run(t)
			d.List(nil)
			set(false)
			if listed(d, "127.0.0.1:2") {
				t.Fatal("unavailable invoker listed")
			}
			set(true)
			if !listed(d, "127.0.0.1:2") {
				t.Fatal("available invoker not listed")
			}
		})
	}
}

// A push that replaces the list starts from its own invokers: the old
// list's cache is not served for it.
func TestT22_PushRebuildsTheList(t *testing.T) {
	epoch := &directory.Epoch{}
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	f := &watchedFactory{epoch: epoch}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", f.newInvoker, nil)
	t.Cleanup(func() { _ = d.Close() })
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
	start(t, d)
	waitLen(t, d, 1)
	register(t, reg, "airnode://127.0.0.1:2/demo.Echo?side=provider")
	waitLen(t, d, 2) // no bump: the push alone brings it
}

// BenchmarkT22_Pick measures the consumer's pick, Directory.List then the
// random balancer's Select, with 1 to 1,000 providers (weights 100,
// warm-up 10 min, a tenth still warming up), for invokers the directory
// watches (the kernel's) and for invokers it must ask on every call
// (polled: the cost of every pick before tester22 finding 6).
//
//	go test -run '^$' -bench BenchmarkT22_Pick -benchmem ./kernel/directory/
func BenchmarkT22_Pick(b *testing.B) {
	for _, mode := range []string{"watched", "polled"} {
		for _, n := range []int{1, 10, 300, 1000} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
				if err != nil {
					b.Fatal(err)
				}
				defer reg.Close()
				var epoch *directory.Epoch
				if mode == "watched" {
					epoch = &directory.Epoch{}
				}
				f := &watchedFactory{epoch: epoch}
				quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
				d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", f.newInvoker, quiet)
				defer d.Close()
				now := time.Now()
				for i := range n {
					started := now.Add(-time.Hour)
					if i%10 == 0 {
						started = now.Add(-time.Minute)
					}
					u := fmt.Sprintf("airnode://10.%d.%d.%d:20880/demo.Echo?side=provider&weight=100&warmup=10m&timestamp=%d",
						i>>16&255, i>>8&255, i&255, started.UnixMilli())
					if err := reg.Register(context.Background(), spi.MustParse(u)); err != nil {
						b.Fatal(err)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := d.Start(ctx); err != nil {
					b.Fatal(err)
				}
				if len(d.List(nil)) != n {
					b.Fatalf("%d providers listed, want %d", len(d.List(nil)), n)
				}
				lb, _ := random.Builder{}.Build(spi.URL{})
				inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if lb.Select(d.List(inv), inv) == nil {
						b.Fatal("nil pick")
					}
				}
			})
		}
	}
}

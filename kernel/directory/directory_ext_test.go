package directory_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeInvoker is an invoker that records its lifecycle.
type fakeInvoker struct {
	url       spi.URL
	available atomic.Bool
	closed    atomic.Int32
}

func (f *fakeInvoker) URL() spi.URL { return f.url }
func (f *fakeInvoker) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{}
}
func (f *fakeInvoker) Available() bool   { return f.available.Load() }
func (f *fakeInvoker) Stats() *spi.Stats { return nil }
func (f *fakeInvoker) Close() error      { f.closed.Add(1); return nil }

type factory struct {
	mu   sync.Mutex
	made []*fakeInvoker
}

func (f *factory) newInvoker(u spi.URL) (spi.Invoker, error) {
	inv := &fakeInvoker{url: u}
	inv.available.Store(true)
	f.mu.Lock()
	f.made = append(f.made, inv)
	f.mu.Unlock()
	return inv, nil
}

func (f *factory) byAddress(addr string) []*fakeInvoker {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeInvoker
	for _, inv := range f.made {
		if inv.url.Address() == addr {
			out = append(out, inv)
		}
	}
	return out
}

func setup(t *testing.T, consumer string) (spi.Registry, *directory.Directory, *factory) {
	t.Helper()
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	f := &factory{}
	d := directory.New(spi.MustParse(consumer), reg, "memory://", f.newInvoker, nil)
	t.Cleanup(func() { _ = d.Close() })
	return reg, d, f
}

func start(t *testing.T, d *directory.Directory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

func register(t *testing.T, reg spi.Registry, u string) spi.URL {
	t.Helper()
	p := spi.MustParse(u)
	if err := reg.Register(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitLen(t *testing.T, d *directory.Directory, n int) []spi.Invoker {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l := d.List(nil)
		if len(l) == n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("List has %d invokers, want %d", len(l), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAddAndRemoveProviders(t *testing.T) {
	reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	a := register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
	start(t, d)
	waitLen(t, d, 1)
	register(t, reg, "airnode://127.0.0.1:2/demo.Echo?side=provider")
	waitLen(t, d, 2)
	if err := reg.Unregister(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	l := waitLen(t, d, 1)
	if l[0].URL().Address() != "127.0.0.1:2" {
		t.Fatalf("left with %v", l[0].URL())
	}
	if got := f.byAddress("127.0.0.1:1"); len(got) != 1 || got[0].closed.Load() != 1 {
		t.Fatalf("removed provider's invoker not closed once: %+v", got)
	}
}

func TestPushKeepsUnchangedInvoker(t *testing.T) {
	reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider")
	start(t, d)
	waitLen(t, d, 1)
	for port := 2; port <= 5; port++ {
		register(t, reg, "airnode://127.0.0.1:"+string(rune('0'+port))+"/demo.Echo?side=provider")
	}
	waitLen(t, d, 5)
	if got := f.byAddress("127.0.0.1:1"); len(got) != 1 || got[0].closed.Load() != 0 {
		t.Fatalf("unchanged provider got %d invokers (closed=%v)", len(got), got[0].closed.Load())
	}
}

func TestFiltersGroupVersionProtocol(t *testing.T) {
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer&group=g1&version=1.0")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?group=g1&version=1.0")
	register(t, reg, "dubbo://127.0.0.1:2/demo.Echo?group=g1&version=1.0")
	register(t, reg, "airnode://127.0.0.1:3/demo.Echo?group=g1&version=1.0&enabled=false")
	register(t, reg, "airnode://127.0.0.1:4/demo.Echo?group=g2&version=1.0")
	start(t, d)
	l := waitLen(t, d, 1)
	if l[0].URL().Address() != "127.0.0.1:1" {
		t.Fatalf("accepted %v", l[0].URL())
	}
	if got := d.Providers(); len(got) != 1 || got[0].Port() != 1 {
		t.Fatalf("Providers() = %v", got)
	}
}

// A disabled provider (enabled=false, Dubbo's override) is not picked,
// and the directory says why when it leaves the reference none (the
// lines of SERVICE_NOT_FOUND).
func TestDisabledProviderIsNamed(t *testing.T) {
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	register(t, reg, "airnode://127.0.0.1:3/demo.Echo?enabled=false")
	start(t, d)
	deadline := time.Now().Add(5 * time.Second)
	for !slices.ContainsFunc(d.Ignored(), func(s string) bool { return strings.Contains(s, "127.0.0.1:3 is disabled (enabled=false") }) {
		if time.Now().After(deadline) {
			t.Fatalf("Ignored() = %q; want the disabled provider named", d.Ignored())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(d.All()); n != 0 {
		t.Fatalf("%d invokers for a disabled provider", n)
	}
}

// TestW2_TimestampSurvivesMerge follows scenario W2's path: a provider's
// timestamp and weight go through the registry and the merge with the
// consumer's URL unchanged into the invoker's URL, where a balancer reads them.
func TestW2_TimestampSurvivesMerge(t *testing.T) {
	ts := time.Now().Add(-time.Minute).UnixMilli()
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer&timestamp=1&weight=1&warmup=1s&timeout=3s")
	p, err := spi.NewURL("airnode", "127.0.0.1", 1, "demo.Echo", map[string]string{
		"side": "provider", "timestamp": strconv.FormatInt(ts, 10), "weight": "50", "warmup": "10m", "timeout": "1s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	start(t, d)
	u := waitLen(t, d, 1)[0].URL()
	for key, want := range map[string]string{"timestamp": strconv.FormatInt(ts, 10), "weight": "50", "warmup": "10m", "timeout": "3s", "side": "consumer"} {
		if got := u.ParamOr(key, ""); got != want {
			t.Errorf("invoker URL %s = %q, want %q (%s)", key, got, want, u)
		}
	}
	if u.Address() != "127.0.0.1:1" {
		t.Errorf("invoker address %s", u.Address())
	}
}

func TestListSkipsUnavailableAndDoesNotAllocate(t *testing.T) {
	reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo")
	register(t, reg, "airnode://127.0.0.1:2/demo.Echo")
	start(t, d)
	waitLen(t, d, 2)
	if n := testing.AllocsPerRun(1000, func() { _ = d.List(nil) }); n != 0 {
		t.Errorf("List allocates %v times per call with every invoker available", n)
	}
	f.byAddress("127.0.0.1:1")[0].available.Store(false)
	l := d.List(nil)
	if len(l) != 1 || l[0].URL().Port() != 2 {
		t.Fatalf("List = %v", l)
	}
	if len(d.All()) != 2 {
		t.Fatalf("All has %d", len(d.All()))
	}
}

func TestCloseClosesInvokersAndStopsPushes(t *testing.T) {
	reg, d, f := setup(t, "airnode://127.0.0.1/demo.Echo")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo")
	start(t, d)
	waitLen(t, d, 1)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if f.byAddress("127.0.0.1:1")[0].closed.Load() != 1 {
		t.Fatal("invoker not closed")
	}
	register(t, reg, "airnode://127.0.0.1:2/demo.Echo")
	time.Sleep(50 * time.Millisecond)
	if len(f.byAddress("127.0.0.1:2")) != 0 || len(d.List(nil)) != 0 {
		t.Fatal("directory acted on a push after Close")
	}
	if err := d.Start(context.Background()); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

// silent is a registry that never pushes.
type silent struct{ spi.Registry }

type stopCount struct{ n *atomic.Int32 }

func (s stopCount) Stop() { s.n.Add(1) }

func (s silent) Subscribe(context.Context, spi.URL, spi.NotifyFunc) (spi.Subscription, error) {
	return stopCount{n: stops}, nil
}

var stops = new(atomic.Int32)

func TestStartTimesOutAndUndoes(t *testing.T) {
	stops.Store(0) // -count=N runs it again
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo"), silent{}, "silent://", (&factory{}).newInvoker, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := d.Start(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start = %v, want deadline exceeded", err)
	}
	if stops.Load() != 1 {
		t.Fatalf("subscription stopped %d times, want 1", stops.Load())
	}
	_ = d.Close()
}

func TestInvokerErrorSkipsProvider(t *testing.T) {
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo")
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo"), reg, "memory://",
		func(spi.URL) (spi.Invoker, error) { return nil, errors.New("boom") }, nil)
	defer d.Close()
	start(t, d)
	if len(d.List(nil)) != 0 {
		t.Fatal("failed provider listed")
	}
}

func BenchmarkList(b *testing.B) {
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	for port := 1; port <= 8; port++ {
		if err := reg.Register(context.Background(), spi.MustParse("airnode://127.0.0.1:"+strconv.Itoa(port)+"/demo.Echo")); err != nil {
			b.Fatal(err)
		}
	}
	f := &factory{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo"), reg, "memory://", f.newInvoker, nil)
	defer d.Close()
	if err := d.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if len(d.List(nil)) != 8 {
				b.Fatal("wrong list")
			}
		}
	})
}

// A reference that names a transport calls only the providers serving it
// (Dubbo's reference protocol); the others are left out, and Ignored says
// why, for the "no provider available" error. A reference naming none
// takes every provider, whatever it serves.
func TestReferenceTransportSelectsProviders(t *testing.T) {
	reg, d, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer&transport=tcp")
	register(t, reg, "airnode://127.0.0.1:1/demo.Echo?side=provider&transport=smux")
	register(t, reg, "airnode://127.0.0.1:2/demo.Echo?side=provider&transport=tcp")
	register(t, reg, "airnode://127.0.0.1:3/demo.Echo?side=provider") // publishes none: taken
	start(t, d)
	l := waitLen(t, d, 2)
	for _, inv := range l {
		if inv.URL().Address() == "127.0.0.1:1" {
			t.Fatalf("the smux provider is listed for a tcp reference: %v", inv.URL())
		}
	}
	if ig := d.Ignored(); len(ig) != 1 || ig[0] != "127.0.0.1:1 serves transport smux; the reference asks for transport=tcp" {
		t.Fatalf("Ignored = %q", ig)
	}

	reg2, d2, _ := setup(t, "airnode://127.0.0.1/demo.Echo?side=consumer")
	register(t, reg2, "airnode://127.0.0.1:1/demo.Echo?side=provider&transport=smux")
	register(t, reg2, "airnode://127.0.0.1:2/demo.Echo?side=provider&transport=tcp")
	start(t, d2)
	waitLen(t, d2, 2)
	if ig := d2.Ignored(); ig != nil {
		t.Fatalf("Ignored without a transport in the reference = %q", ig)
	}
}

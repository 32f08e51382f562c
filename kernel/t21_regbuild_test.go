package kernel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester21 follow-up: a registry's Build that blocks (a third-party
// extension) fails the Export or Refer that waits for it at its ctx's
// end, naming the Build, and holds up neither Shutdown nor the node's
// other Exports and Refers (it used to run under the node's lock:
// "shutdown STILL BLOCKED after 4.002s").

// t21BuildRegistry is the memory registry, named name, whose Build blocks
// until gate closes (ignoring everything else). builds counts Builds
// started, closes the Closes of the registries it built.
type t21BuildRegistry struct {
	name           string
	gate           chan struct{}
	builds, closes atomic.Int64
	once           sync.Once
	in             *memory.Builder
}

func (b *t21BuildRegistry) Name() string { return b.name }
func (b *t21BuildRegistry) Build(u spi.URL) (spi.Registry, error) {
	b.builds.Add(1)
	<-b.gate
	b.once.Do(func() { b.in = memory.NewBuilder() })
	r, err := b.in.Build(u.WithScheme("memory"))
	return &t21BuiltReg{Registry: r, b: b}, err
}

type t21BuiltReg struct {
	spi.Registry
	b *t21BuildRegistry
}

func (r *t21BuiltReg) Close() error {
	r.b.closes.Add(1)
	return r.Registry.Close()
}

// t21StuckBuildNode returns a faultNode whose registry is a
// t21BuildRegistry named stuckreg, and that registry; the gate is
// closed at the end of the test unless the test closes it (open).
func t21StuckBuildNode(t *testing.T) (*Node, recordLog, *t21BuildRegistry, func()) {
	t.Helper()
	cat := testCatalogs(t)
	rb := &t21BuildRegistry{name: "stuckreg", gate: make(chan struct{})}
	if err := cat.Registry.Register(rb, faultOrigin); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	open := func() { once.Do(func() { close(rb.gate) }) }
	t.Cleanup(open)
	n, logs := faultNode(t, cat, WithRegistry(spi.MustParse("stuckreg://x")))
	return n, logs, rb, open
}

// t21Timed runs f with a ctx of d and fails the test unless it returns
// within bound (Errorf: it may run off the test's goroutine); it returns
// f's error and how long it took.
func t21Timed(t *testing.T, what string, d, bound time.Duration, f func(context.Context) error) (error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		took := time.Since(start)
		t.Logf("%s (%v ctx) returned after %v: %v", what, d, took.Round(time.Millisecond), err)
		return err, took
	case <-time.After(bound):
		t.Errorf("%s (%v ctx) still blocked after %v", what, d, bound)
		return errors.New("still blocked"), bound
	}
}

// TestT21_RegBuild_StuckBuild: Export under a 500 ms ctx, with a
// registry whose Build blocks, returns within 2 s with a
// *LeftRunningError naming the Build; an Export of another service and a
// Refer started while that Build is stuck (same registry URL) wait for
// that same Build (no second Build starts), each until its own ctx's end,
// and fail the same way; Shutdown under a 1 s ctx then returns within
// 2.5 s, without error (the Build is not the node's yet); an Export
// after it fails at once (node closed). When the gate opens the Build
// returns, its registry is closed (the node has shut down) and nothing is
// left running.
func TestT21_RegBuild_StuckBuild(t *testing.T) {
	before := goleak.IgnoreCurrent()
	n, logs, rb, open := t21StuckBuildNode(t)

	firstDone := make(chan error, 1)
	go func() {
		err, took := t21Timed(t, "Export demo.Echo", 500*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
			_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
			return err
		})
		if took < 400*time.Millisecond {
			t.Errorf("Export returned after %v, before its ctx's end", took)
		}
		firstDone <- err
	}()
	deadline := time.Now().Add(2 * time.Second)
	for rb.builds.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if rb.builds.Load() == 0 {
		t.Fatal("the registry's Build was not called within 2s")
	}

	// While the first Build is stuck: another service's Export and a
	// Refer through the same registry URL.
	var wg sync.WaitGroup
	var secondErr, referErr error
	wg.Go(func() {
		secondErr, _ = t21Timed(t, "Export demo.Other", 300*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
			_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Other"))
			return err
		})
	})
	wg.Go(func() {
		referErr, _ = t21Timed(t, "Refer demo.Echo", 300*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
			_, err := n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), spi.URL{})
			return err
		})
	})
	wg.Wait()
	wantLeftRunning(t, secondErr, logs, `registry "stuckreg" Build`, "export demo.Other")
	wantLeftRunning(t, referErr, logs, `registry "stuckreg" Build`, "refer demo.Echo")
	wantLeftRunning(t, <-firstDone, logs, `registry "stuckreg" Build`, "export demo.Echo")
	if got := rb.builds.Load(); got != 1 {
		t.Errorf("%d Builds started; want 1 (the callers share the Build in progress)", got)
	}

	err, _ := t21Timed(t, "Shutdown", time.Second, 2500*time.Millisecond, n.Shutdown)
	if err != nil {
		t.Errorf("Shutdown: %v; want nil (nothing exported, no registry built yet)", err)
	}
	err, _ = t21Timed(t, "Export after Shutdown", 500*time.Millisecond, time.Second, func(ctx context.Context) error {
		_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
		return err
	})
	if !errors.Is(err, errClosed) {
		t.Errorf("Export after Shutdown: %v; want %v", err, errClosed)
	}

	open()
	deadline = time.Now().Add(2 * time.Second)
	for rb.closes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := rb.closes.Load(); got != 1 {
		t.Errorf("the registry built after Shutdown was closed %d times; want 1", got)
	}
	goleak.VerifyNone(t, before)
}

// TestT21_RegBuild_LateBuildServesNextExport: a Build that returns after
// its Export gave up makes the node's registry for that URL: the next
// Export uses it (no second Build) and registers in it.
func TestT21_RegBuild_LateBuildServesNextExport(t *testing.T) {
	n, logs, rb, open := t21StuckBuildNode(t)
	err, _ := t21Timed(t, "Export demo.Echo", 300*time.Millisecond, 2*time.Second, func(ctx context.Context) error {
		_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
		return err
	})
	wantLeftRunning(t, err, logs, `registry "stuckreg" Build`, "export demo.Echo")
	open()
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	if got := rb.builds.Load(); got != 1 {
		t.Errorf("%d Builds; want 1 (the late one is the node's registry)", got)
	}
	r, err := n.registry(ctxT(t), "test", spi.MustParse("stuckreg://x"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.Lookup(ctxT(t), spi.MustParse("airnode:///demo.Echo?side=consumer"))
	if err != nil || len(l) != 1 || l[0].Address() != e.URL().Address() {
		t.Errorf("registry lists %v (%v); want the provider at %s", l, err, e.URL().Address())
	}
	if err := n.Shutdown(ctxT(t)); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if got := rb.closes.Load(); got != 1 {
		t.Errorf("registry closed %d times by Shutdown; want 1", got)
	}
}

package kernel

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// TestLib1_WaitReadyRightAfterRefer (tester47 finding 1): a provider
// exported on a memory:// registry, then, 100 times, a fresh node of the
// same catalogs refers to it and waits: the reference lists the provider
// when Refer returns (the registry's first list, directory.Start), and
// WaitReady returns true. Each consumer is a fresh node (a fresh
// connection pool), over real loopback connections. The race tester47
// found (a first connection made between WaitReady's reads of "a provider
// is up" and "an attempt is pending" was neither) struck about once in
// 2,000 runs under -race; TestLib1_WaitReadyFirstConnectionBetweenReads
// makes it strike every time, so this loop no longer runs 1,000 times
// hunting for it.
func TestLib1_WaitReadyRightAfterRefer(t *testing.T) {
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://lib1-ready")
	p := NewNode(cat, WithRegistry(reg), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		c := NewNode(cat, WithRegistry(reg), WithLogger(quiet))
		ref, err := c.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		listed := len(ref.dir.All())
		t0 := time.Now()
		ok := ref.WaitReady(ctx)
		took := time.Since(t0)
		var after string
		if !ok {
			for _, inv := range ref.dir.All() {
				after += fmt.Sprintf("; then %s available=%v connecting=%v", inv.URL().Address(), inv.Available(), isConnecting(inv))
			}
		}
		_ = c.Close()
		if listed != 1 || !ok {
			t.Fatalf("run %d: Refer returned listing %d providers (want 1); WaitReady = %v after %v%s", i, listed, ok, took, after)
		}
	}
}

// TestLib1_WaitReadyFirstConnectionBetweenReads: tester47's race made
// certain. The one listed provider's first connection completes right
// after WaitReady first reads its state, whichever it reads first
// (available or connecting), as a real connection may complete between
// any two reads; WaitReady must report true. Read "a provider is up" and
// then "an attempt is pending", it saw neither and returned false.
func TestLib1_WaitReadyFirstConnectionBetweenReads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://lib1-between"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Register(ctx, spi.MustParse("airnode://127.0.0.1:1/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	var inv *flipInvoker
	dir := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", func(u spi.URL) (spi.Invoker, error) {
		inv = &flipInvoker{url: u}
		return inv, nil
	}, nil)
	if err := dir.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if inv == nil || len(dir.All()) != 1 {
		t.Fatalf("directory lists %d invokers after Start, want the one provider", len(dir.All()))
	}
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	r := &Reference{node: n, dir: dir, done: make(chan struct{})}
	inv.armed.Store(true)
	if !r.WaitReady(ctx) {
		t.Fatalf("WaitReady = false; the provider's first connection completed right after WaitReady's first read of its state (%d reads; now available=%v connecting=%v)",
			inv.reads.Load(), inv.Available(), inv.connecting())
	}
}

// flipInvoker is a provider invoker making its first connection, which
// completes (available, no longer connecting) right after the first read
// of its state once armed.
type flipInvoker struct {
	url   spi.URL
	armed atomic.Bool
	reads atomic.Int32
	up    atomic.Bool
	stats spi.Stats
}

func (f *flipInvoker) read() {
	if f.armed.Load() && f.reads.Add(1) == 1 {
		f.up.Store(true)
	}
}

func (f *flipInvoker) Available() bool {
	up := f.up.Load()
	f.read()
	return up
}

func (f *flipInvoker) connecting() bool {
	up := f.up.Load()
	f.read()
	return !up
}

func (f *flipInvoker) redialNow() bool { return false }
func (f *flipInvoker) URL() spi.URL    { return f.url }
func (f *flipInvoker) Stats() *spi.Stats {
	return &f.stats
}
func (f *flipInvoker) Close() error { return nil }
func (f *flipInvoker) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "flipInvoker takes no calls")}
}

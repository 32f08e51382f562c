package pluginhost_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// fix-o leftover (fix-r #2): whether the host calls a filter plugin
// through Filter.Chain follows the running process, read from each
// (re)start's Describe, not the first process's. A plugin binary replaced
// in place by a build from before Chain (testdata/unaryfilter: Chain
// unimplemented) and handed over to on SIGTERM gets unary Invokes, and
// no call fails across the switch; replaced back by a build with Chain
// (testdata/chainfilter, which turns a result v into "chain:v") and
// restarted after a kill, it wraps the call again. Before, the first
// process's Chain stayed: every call to the old build failed with
// Unimplemented, and the newer build's result was never seen.
func TestFilterChainCapabilityFollowsTheRunningBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchfilter")
	testbin.ReplaceFile(t, binary("chainfilter"), path)
	h, cat, err := startHostWith(t, nil, config.Plugin{Name: "acme.switch", Point: pluginrpc.PointFilter, Command: path})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := cat.Filter.Get("acme.switch")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=consumer"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider"),
		func(_ context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: inv.Args[0]} })
	call := func() spi.Result {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"x"}})
	}
	want := func(when string, v any) {
		t.Helper()
		for range 3 {
			if r := call(); r.Err != nil || r.Value != v {
				t.Fatalf("%s: call returned %v, %v; want %q", when, r.Value, r.Err, v)
			}
		}
	}
	want("with Chain", "chain:x")

	// Replace the binary by the older build and hand over to it, calls
	// running all along.
	testbin.ReplaceFile(t, binary("unaryfilter"), path)
	old := info(t, h, "acme.switch").PID
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := call()
				calls.Add(1)
				if r.Err != nil || (r.Value != "x" && r.Value != "chain:x") {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, r)
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	unary := waitRunning(t, h, "acme.switch", old)
	waitGone(t, old, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d calls failed across the handover to a build without Chain; first: %+v", n, calls.Load(), firstErr.Load())
	}
	want("after the handover to the build without Chain", "x")

	// Back to the build with Chain, by a restart after a kill (the old
	// build asks for no handover).
	testbin.ReplaceFile(t, binary("chainfilter"), path)
	if err := syscall.Kill(unary.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, h, "acme.switch", unary.PID)
	want("after the restart into the build with Chain", "chain:x")
}

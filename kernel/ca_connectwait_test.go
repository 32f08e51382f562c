package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestCa_CtxEndsWhileWaitingForAFirstConnection (tester91 #1): a call
// whose ctx ends while it waits for the first connection to a provider
// that accepts and never answers fails as Call promises for a ctx's end:
// a deadline CLIENT_TIMEOUT matching context.DeadlineExceeded, a cancel
// CLIENT_ERROR matching context.Canceled, each with ctx's cause, nothing
// sent; not CHANNEL_INACTIVE "not connected yet", which matched neither.
func TestCa_CtxEndsWhileWaitingForAFirstConnection(t *testing.T) {
	addr := silentPeer(t)
	r := refer(t, consumer(t), "airnode://"+addr+"/t91.Shop?timeout=1s")
	budget := errors.New("my budget")
	left := errors.New("user left")
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, func())
		status spi.Status
		is     error
		cause  error
	}{
		{"deadline", func() (context.Context, func()) {
			return context.WithTimeoutCause(context.Background(), 200*time.Millisecond, budget)
		}, spi.StatusClientTimeout, context.DeadlineExceeded, budget},
		{"cancel", func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(200*time.Millisecond, func() { cancel(left) })
			return ctx, func() { cancel(nil) }
		}, spi.StatusClientError, context.Canceled, left},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			t0 := time.Now()
			err := r.Call(ctx, "Get", []any{1}, nil)
			took := time.Since(t0)
			if took > 900*time.Millisecond {
				t.Errorf("the call took %v; want about 200ms (ctx's end), well before the 1s timeout", took)
			}
			if spi.StatusOf(err) != tc.status || !errors.Is(err, tc.is) || !errors.Is(err, tc.cause) {
				t.Fatalf("err = %v (status %v); want %v matching %v and the cause %q", err, spi.StatusOf(err), tc.status, tc.is, tc.cause)
			}
			for _, w := range []string{"waiting for a first connection to " + addr, "nothing was sent", "(cause: " + tc.cause.Error() + ")"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v; want it to say %q", err, w)
				}
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
		})
	}
}

// TestCa_WaitsEndWhenTheReferenceOrItsNodeCloses (tester91 #2): a closed
// reference never becomes available, so WaitAvailable with a ctx that
// never ends returns false promptly when the reference's Close or its
// node's Close or Shutdown begins, as WaitReady and WaitSettled do while
// a provider that never answers holds its first connection attempt (3 s):
// before, WaitAvailable never returned (goleak found it).
func TestCa_WaitsEndWhenTheReferenceOrItsNodeCloses(t *testing.T) {
	silent := silentPeer(t)
	waits := map[string]struct {
		url  string
		wait func(*Reference) bool
	}{
		"WaitAvailable": {"airnode:///t91.Never?timeout=1s", func(r *Reference) bool { return r.WaitAvailable(context.Background()) }},
		"WaitReady":     {"airnode://" + silent + "/t91.Never?timeout=1s", func(r *Reference) bool { return r.WaitReady(context.Background()) }},
		"WaitSettled": {"airnode://" + silent + "/t91.Never?timeout=1s", func(r *Reference) bool {
			r.WaitSettled(context.Background())
			return false
		}},
	}
	closers := map[string]func(*Node, *Reference){
		"ref.Close":     func(_ *Node, r *Reference) { _ = r.Close() },
		"node.Close":    func(n *Node, _ *Reference) { _ = n.Close() },
		"node.Shutdown": func(n *Node, _ *Reference) { _ = n.Shutdown(context.Background()) },
	}
	for wname, w := range waits {
		for cname, closeIt := range closers {
			t.Run(wname+"/"+cname, func(t *testing.T) {
				n := NewNode(testCatalogs(t), WithLogger(quiet), WithRegistry(spi.MustParse("file://"+t.TempDir())))
				defer n.Close()
				r := refer(t, n, w.url)
				done := make(chan bool, 1)
				go func() { done <- w.wait(r) }()
				select {
				case ok := <-done:
					t.Fatalf("%s returned %v before anything closed", wname, ok)
				case <-time.After(200 * time.Millisecond):
				}
				t0 := time.Now()
				go closeIt(n, r)
				select {
				case ok := <-done:
					if ok {
						t.Errorf("%s = true after %s; want false", wname, cname)
					}
					t.Logf("%s returned after %s within %v", wname, cname, time.Since(t0).Round(time.Microsecond))
				case <-time.After(time.Second):
					t.Fatalf("%s still waiting 1s after %s began", wname, cname)
				}
				if wname == "WaitAvailable" {
					if r.WaitAvailable(context.Background()) {
						t.Error("WaitAvailable on a closed reference = true")
					}
				}
			})
		}
	}
}

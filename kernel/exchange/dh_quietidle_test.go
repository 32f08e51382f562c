package exchange

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestDH_QuietWatchLooksOnlyWhileCallsArePending (fix-dh): the quiet
// watch of a consumer channel with no call pending makes no look at all
// (it looked every 0.5 s, pending or not: 10,000 idle channels took 10 %
// of a CPU); a call pending wakes it, and it looks until that call is gone,
// then stops again; Close leaves no look and no goroutine behind
// (TestMain's goleak). Counted looks, not timings: the bounds are 2 s
// windows against a 0.5 s look.
func TestDH_QuietWatchLooksOnlyWhileCallsArePending(t *testing.T) {
	t.Parallel()
	ch, _, _, _ := silentPeer(t, checkHB{})
	looks := func() int64 { return ch.check.looks.Load() }

	time.Sleep(2 * time.Second)
	if n := looks(); n != 0 || !ch.check.idle.Load() {
		t.Fatalf("idle channel, no call for 2 s: %d looks, idle %v; want 0 looks, idle", n, ch.check.idle.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ch.Invoke(ctx, mpCodec{}, echoInv("Echo", "x"), time.Minute).Err // the silent peer never answers
	}()
	time.Sleep(2 * time.Second)
	if n := looks(); n < 2 {
		t.Fatalf("a call pending for 2 s: %d looks; want at least 2 (one per %v)", n, quietLook)
	}
	cancel()
	wantStatus(t, <-done, spi.StatusClientError) // cancelled
	if p := ch.Pending(); p != 0 {
		t.Fatalf("%d calls pending after the only one was cancelled", p)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !ch.check.idle.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("no call pending: the watch still runs after 5 s (%d looks)", looks())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := looks()
	time.Sleep(2 * time.Second)
	if n := looks(); n != stopped {
		t.Fatalf("no call pending: %d looks in 2 s after the watch stopped; want 0", n-stopped)
	}

	// The next call wakes it again.
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		done <- ch.Invoke(ctx2, mpCodec{}, echoInv("Echo", "x"), time.Minute).Err
	}()
	time.Sleep(2 * time.Second)
	if n := looks() - stopped; n < 2 {
		t.Fatalf("a second call pending for 2 s: %d looks; want at least 2", n)
	}
	ch.Close("test done")
	ch.Wait()
	cancel2()
	<-done
	closed := looks()
	time.Sleep(time.Second)
	if n := looks(); n != closed {
		t.Fatalf("%d looks after Close", n-closed)
	}
}

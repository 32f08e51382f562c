package kernel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A call ended by the caller's context deadline matches
// context.DeadlineExceeded (as a cancelled one matches context.Canceled)
// and keeps its status; one ended by the reference's own timeout key,
// with the context's deadline still ahead, does not. A real provider
// whose handler sleeps (until the call's deadline: Sleep returns when its
// context ends), over loopback TCP. The references are connected first
// and the deadlines are 1 s: a call whose deadline passed before its
// request was sent (a dial, or a loaded machine, taking the old 100 ms)
// ends CLIENT_TIMEOUT, never sent, which is another case.
func TestCallerDeadlineMatchesDeadlineExceeded(t *testing.T) {
	_, e := provider(t)
	r := referConnected(t, "timeout=5s", e)

	ctx, cancel := context.WithTimeout(ctxT(t), time.Second)
	defer cancel()
	_, err := r.Invoke(ctx, "Sleep", 10_000)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, spi.ErrServerTimeout) {
		t.Errorf("ctx deadline: %v (status %v), want SERVER_TIMEOUT matching context.DeadlineExceeded", err, spi.StatusOf(err))
	}

	_, err = r.Invoke(ctx, "Echo", 1) // the deadline has passed: never sent
	if !errors.Is(err, context.DeadlineExceeded) || spi.StatusOf(err) != spi.StatusClientTimeout {
		t.Errorf("expired ctx: %v, want CLIENT_TIMEOUT matching context.DeadlineExceeded", err)
	}

	r2 := referConnected(t, "methods.Sleep.timeout=1s", e)
	_, err = r2.Invoke(ctxT(t), "Sleep", 10_000)
	if !errors.Is(err, spi.ErrServerTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout key: %v, want SERVER_TIMEOUT not matching context.DeadlineExceeded (the caller's ctx did not expire)", err)
	}

	cctx, ccancel := context.WithCancel(ctxT(t))
	time.AfterFunc(50*time.Millisecond, ccancel)
	_, err = r.Invoke(cctx, "Sleep", 10_000)
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancel: %v, want context.Canceled", err)
	}
}

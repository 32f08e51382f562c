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
// whose handler sleeps, over loopback TCP.
func TestCallerDeadlineMatchesDeadlineExceeded(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?timeout=5s")

	ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	_, err := r.Invoke(ctx, "Sleep", 1000)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, spi.ErrServerTimeout) {
		t.Errorf("ctx deadline: %v (status %v), want SERVER_TIMEOUT matching context.DeadlineExceeded", err, spi.StatusOf(err))
	}

	_, err = r.Invoke(ctx, "Echo", 1) // the deadline has passed: never sent
	if !errors.Is(err, context.DeadlineExceeded) || spi.StatusOf(err) != spi.StatusClientTimeout {
		t.Errorf("expired ctx: %v, want CLIENT_TIMEOUT matching context.DeadlineExceeded", err)
	}

	r2 := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?methods.Sleep.timeout=100ms")
	_, err = r2.Invoke(ctxT(t), "Sleep", 1000)
	if !errors.Is(err, spi.ErrServerTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout key: %v, want SERVER_TIMEOUT not matching context.DeadlineExceeded (the caller's ctx did not expire)", err)
	}

	cctx, ccancel := context.WithCancel(ctxT(t))
	time.AfterFunc(50*time.Millisecond, ccancel)
	_, err = r.Invoke(cctx, "Sleep", 1000)
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancel: %v, want context.Canceled", err)
	}
}

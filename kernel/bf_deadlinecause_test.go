package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester85 #9: a caller's context.WithTimeoutCause(ctx, d, mine) whose
// deadline ends the call while the provider runs it (a real provider on
// loopback) returns an error matching mine and context.DeadlineExceeded
// both, as gRPC's status from context.Cause, with its SERVER_TIMEOUT
// status; and the message names the cause. Every one of 20 calls.
func TestBF_DeadlineCauseDuringTheCallIsKept(t *testing.T) {
	ctx := ctxT(t)
	_, svc, ref := causePair(t, ctx)
	go func() { // Slow says it started: take each
		for {
			select {
			case <-svc.started:
			case <-ctx.Done():
				return
			}
		}
	}()
	mine := errors.New("the user's 150ms budget ran out")
	for i := range 20 {
		tctx, cancel := context.WithTimeoutCause(ctx, 150*time.Millisecond, mine)
		err := ref.Call(tctx, "Slow", nil, new(string))
		cancel()
		if !errors.Is(err, mine) || !errors.Is(err, context.DeadlineExceeded) || spi.StatusOf(err) != spi.StatusServerTimeout ||
			!strings.Contains(err.Error(), "(cause: "+mine.Error()+")") {
			t.Fatalf("call %d: %v (status %v); want SERVER_TIMEOUT matching the caller's cause and context.DeadlineExceeded", i, err, spi.StatusOf(err))
		}
	}
}

package exchange

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReqCtxDeadline(t *testing.T) {
	ctx := &reqCtx{ch: &Channel{ctx: context.Background()}, due: mono() + int64(30*time.Millisecond)}
	defer ctx.release()
	if ctx.Err() != nil {
		t.Fatal("over before its deadline")
	}
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("no deadline")
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the deadline")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", ctx.Err())
	}
}

func TestReqCtxLazyExpiry(t *testing.T) {
	// nobody asked for Done: Err still reports the deadline, and a later
	// Done is already closed
	ctx := &reqCtx{ch: &Channel{ctx: context.Background()}, due: mono() - int64(time.Millisecond)}
	defer ctx.release()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done open after Err reported the deadline")
	}
}

type ctxKey struct{}

func TestReqCtxParentCancel(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	ctx := &reqCtx{ch: &Channel{ctx: parent}}
	defer ctx.release()
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("value not inherited")
	}
	child, cc := context.WithTimeout(ctx, time.Hour) // as handlers do
	defer cc()
	cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("child not cancelled with the channel")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err %v", ctx.Err())
	}
}

func TestReqCtxRelease(t *testing.T) {
	ctx := &reqCtx{ch: &Channel{ctx: context.Background()}, due: mono() + int64(time.Hour)}
	done := ctx.Done()
	ctx.release()
	select {
	case <-done:
	default:
		t.Fatal("release did not cancel")
	}
	ctx.release() // idempotent
}

// context.Cause of a request context is why it ended: the deadline, or the
// channel's end; a cancel event's cause is tested over TCP (cancel_test.go).
// After release alone it is context.Canceled, as after a CancelFunc.
func TestReqCtxCause(t *testing.T) {
	ctx := &reqCtx{ch: &Channel{ctx: context.Background()}, due: mono() - 1}
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != context.DeadlineExceeded {
		t.Fatalf("past its deadline: err %v cause %v", ctx.Err(), context.Cause(ctx))
	}
	ctx.release()

	parent, cancel := context.WithCancelCause(context.Background())
	ctx = &reqCtx{ch: &Channel{ctx: parent}}
	done := ctx.Done() // registers the link
	cancel(errors.New("channel closed"))
	<-done
	if ctx.Err() != context.Canceled || context.Cause(ctx) == nil || context.Cause(ctx).Error() != "channel closed" {
		t.Fatalf("channel ended: err %v cause %v", ctx.Err(), context.Cause(ctx))
	}
	ctx.release()

	ctx = &reqCtx{ch: &Channel{ctx: context.Background()}}
	ctx.release()
	if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
		t.Fatalf("released: err %v cause %v", ctx.Err(), context.Cause(ctx))
	}
}

package exchange

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReqCtxDeadline(t *testing.T) {
	ctx := &reqCtx{parent: context.Background(), due: mono() + int64(30*time.Millisecond)}
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
	ctx := &reqCtx{parent: context.Background(), due: mono() - int64(time.Millisecond)}
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
	ctx := &reqCtx{parent: parent}
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
	ctx := &reqCtx{parent: context.Background(), due: mono() + int64(time.Hour)}
	done := ctx.Done()
	ctx.release()
	select {
	case <-done:
	default:
		t.Fatal("release did not cancel")
	}
	ctx.release() // idempotent
}

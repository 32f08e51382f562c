package kernel_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Call refuses a reply that is not a non-nil pointer before sending
// (new-user report 60, finding 8: the method ran, then the decode failed
// BAD_RESPONSE), CLIENT_ERROR naming its type; nil still discards the
// value, and a Bind stub, which passes its own pointer, works.
func TestCallRefusesANonPointerReply(t *testing.T) {
	runs := new(atomic.Int64)
	ref := exportAndRefer(t, countSvc{runs}, "test.Count", "transport=tcp", "transport=tcp&timeout=10s")
	ctx := context.Background()
	var n int
	var nilPtr *int
	for _, c := range []struct {
		reply any
		want  string
	}{
		{n, "kernel: call test.Count.Add: reply is of type int, not a pointer: pass a pointer to the value to decode into (&v), or nil to discard it; not sent"},
		{"s", "kernel: call test.Count.Add: reply is of type string, not a pointer: pass a pointer to the value to decode into (&v), or nil to discard it; not sent"},
		{nilPtr, "kernel: call test.Count.Add: reply is a nil *int: pass a pointer to the value to decode into (&v), or nil to discard it; not sent"},
	} {
		err := ref.Call(ctx, "Add", []any{1, 2}, c.reply)
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusClientError || e.Message != c.want {
			t.Errorf("Call(reply %T) = %v\nwant CLIENT_ERROR: %s", c.reply, err, c.want)
		}
	}
	if got := runs.Load(); got != 0 {
		t.Fatalf("the method ran %d times; want 0", got)
	}
	if err := ref.Call(ctx, "Add", []any{1, 2}, nil); err != nil {
		t.Fatalf("Call(reply nil) = %v", err)
	}
	if err := ref.Call(ctx, "Add", []any{1, 2}, &n); err != nil || n != 3 {
		t.Fatalf("Call(&n) = %d, %v; want 3", n, err)
	}
	var stub struct {
		Add func(context.Context, int, int) (int, error)
	}
	if err := ref.Bind(&stub); err != nil {
		t.Fatal(err)
	}
	if sum, err := stub.Add(ctx, 2, 3); err != nil || sum != 5 {
		t.Fatalf("stub Add = %d, %v; want 5", sum, err)
	}
}

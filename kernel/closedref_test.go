package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A call after Reference.Close, or after the consumer node's Shutdown,
// says the reference is closed (CLIENT_ERROR, ErrReferenceClosed) instead
// of "no provider available".
func TestCallAfterCloseSaysTheReferenceIsClosed(t *testing.T) {
	_, e := provider(t)
	u := "airnode://" + e.URL().Address() + "/demo.Echo"

	c := consumer(t)
	r := refer(t, c, u)
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Invoke(ctxT(t), "Echo", "x")
	want := "kernel: reference demo.Echo is closed (reference closed)"
	if spi.StatusOf(err) != spi.StatusClientError || !errors.Is(err, ErrReferenceClosed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("after Close: %v; want CLIENT_ERROR %q", err, want)
	}

	c2 := consumer(t)
	r2 := refer(t, c2, u)
	if err := r2.Call(ctxT(t), "Echo", []any{"x"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	err = r2.Call(ctxT(t), "Echo", []any{"x"}, nil)
	want = "kernel: reference demo.Echo is closed (its node is shut down)"
	if spi.StatusOf(err) != spi.StatusClientError || !errors.Is(err, ErrReferenceClosed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("after the node's Shutdown: %v; want CLIENT_ERROR %q", err, want)
	}
}

// Tester8 finding: an empty method name was sent to the provider, which
// answered SERVICE_NOT_FOUND 'no method ""'; it is the caller's mistake,
// refused before anything is sent.
func TestEmptyMethodNameIsRefusedLocally(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo")
	_, err := r.Invoke(ctxT(t), "", "x")
	if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), "empty method name") {
		t.Fatalf("Invoke with method \"\": %v, want CLIENT_ERROR naming the empty method name", err)
	}
}

// Tester10 finding: the first call of a fresh reference with a context
// already cancelled said CHANNEL_INACTIVE "not connected yet", which
// errors.Is(err, context.Canceled) did not match, as the Invoke doc
// promises; a context past its deadline matches DeadlineExceeded.
func TestCallWithAContextAlreadyDoneMatchesItsError(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Invoke(ctx, "Echo", "x"); !errors.Is(err, context.Canceled) || spi.StatusOf(err) != spi.StatusClientError {
		t.Errorf("cancelled ctx: %v, want CLIENT_ERROR matching context.Canceled", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	if _, err := r.Invoke(dctx, "Echo", "x"); !errors.Is(err, context.DeadlineExceeded) || spi.StatusOf(err) != spi.StatusClientTimeout {
		t.Errorf("ctx past its deadline: %v, want CLIENT_TIMEOUT matching context.DeadlineExceeded", err)
	}
}

package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// A context cancelled with an *spi.Error as its cause was cancelled by a
// party that failed the call with that status (the kernel abandoning a
// provider call at shutdown: SERVER_ERROR): a failure of that status, not
// a cancelled call. Any other cause is a cancellation as before.
func TestCancelledWithAStatusCauseIsThatFailure(t *testing.T) {
	reg := metrics.NewRegistry()
	f := build(t, metrics.NewBuilder(reg), spi.Provider)
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/demo.Echo"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "%w", ctx.Err())}
	})
	for _, cause := range []error{&spi.Error{Status: spi.StatusServerError, Message: "provider shutting down"}, errors.New("consumer went away"), nil} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		f.Invoke(ctx, next, &spi.Invocation{Service: "demo.Echo", Method: "Sleep"})
	}
	row, _ := reg.Lookup(spi.Provider, "demo.Echo", "Sleep")
	if row.Count != 3 || row.Cancelled != 2 || row.Failures != 1 || row.FailuresByStatus["SERVER_ERROR"] != 1 {
		t.Errorf("row %+v: want 3 calls, 2 cancelled, 1 SERVER_ERROR", row)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&spi.Error{Status: spi.StatusServerError})
	if got := metrics.CancelledBy(ctx); got != spi.StatusServerError {
		t.Errorf("CancelledBy = %v, want SERVER_ERROR", got)
	}
	if got := metrics.CancelledBy(context.Background()); got != 0 {
		t.Errorf("CancelledBy(live context) = %v, want 0", got)
	}
}

// A call the provider's own shutdown abandoned (shutdown.timeout passed;
// its consumer is answered SERVER_ERROR) was counted on the provider as
// cancelled, as if its consumer had gone away. Real nodes: the provider's
// row now counts it a SERVER_ERROR failure, and nothing cancelled; so does
// the consumer's.
func TestProviderCountsCallsItsShutdownAbandonedAsServerError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := quietNode(t, kernel.WithShutdownWait(0), kernel.WithShutdownTimeout(200*time.Millisecond))
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	c := quietNode(t)
	r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?timeout=20s&retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	preg, creg := registry(t, p), registry(t, c)
	got := make(chan error, 1)
	go func() {
		_, err := r.Invoke(ctx, "Sleep", 10_000)
		got <- err
	}()
	for {
		if row, _ := preg.Lookup(spi.Provider, "demo.Echo", "Sleep"); row.InFlight == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the call never reached the provider")
		case <-time.After(5 * time.Millisecond):
		}
	}
	var ab *kernel.AbandonedError
	if err := p.Shutdown(ctx); !errors.As(err, &ab) {
		t.Fatalf("Shutdown = %v; want an AbandonedError", err)
	}
	if err := <-got; spi.StatusOf(err) != spi.StatusServerError {
		t.Fatalf("the abandoned call = %v; want SERVER_ERROR", err)
	}
	row, _ := preg.Lookup(spi.Provider, "demo.Echo", "Sleep")
	if row.Count != 1 || row.Cancelled != 0 || row.Failures != 1 || row.FailuresByStatus["SERVER_ERROR"] != 1 {
		t.Errorf("provider row %+v: want 1 call, a SERVER_ERROR failure, none cancelled", row)
	}
	row, _ = creg.Lookup(spi.Consumer, "demo.Echo", "Sleep")
	if row.Count != 1 || row.Cancelled != 0 || row.FailuresByStatus["SERVER_ERROR"] != 1 {
		t.Errorf("consumer row %+v: want 1 SERVER_ERROR failure", row)
	}
}

// registry returns the metrics registry of n's catalog.
func registry(t *testing.T, n *kernel.Node) *metrics.Registry {
	t.Helper()
	b, err := n.Catalogs().Filter.Get(metrics.Name)
	if err != nil {
		t.Fatal(err)
	}
	reg, ok := metrics.RegistryOf(b)
	if !ok {
		t.Fatal("the metrics filter is not metrics.Builder")
	}
	return reg
}

package kernel

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// The consumer side of Node.Shutdown lets its calls in flight finish, as
// Reference.Close does, within shutdown.timeout; one still unanswered at
// the bound fails saying the consumer shut down (tester10 finding 5).
func TestConsumerShutdownDrainsCallsInFlight(t *testing.T) {
	_, e := provider(t)
	addr := e.URL().Address()

	c := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownTimeout(2*time.Second))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+addr+"/demo.Echo?timeout=5s")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil { // connected
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Invoke(context.Background(), "Sleep", 500)
		}()
	}
	eventually(t, "3 calls in flight", func() bool { return r.Providers()[0].Stats().Active() == 3 })
	start := time.Now()
	if err := c.Shutdown(ctxT(t)); err != nil {
		t.Fatalf("consumer Shutdown: %v", err)
	}
	took := time.Since(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d in flight during the consumer's Shutdown: %v", i, err)
		}
	}
	t.Logf("consumer Shutdown took %v", took)
	if _, err := r.Invoke(ctxT(t), "Echo", 1); !errors.Is(err, ErrReferenceClosed) {
		t.Fatalf("call after Shutdown = %v, want ErrReferenceClosed", err)
	}
}

func TestConsumerShutdownFailsCallsPastItsBound(t *testing.T) {
	_, e := provider(t)
	addr := e.URL().Address()

	const bound = 300 * time.Millisecond
	c := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownTimeout(bound))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+addr+"/demo.Echo?timeout=10s")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(context.Background(), "Sleep", 5000)
		errc <- err
	}()
	eventually(t, "the call in flight", func() bool { return r.Providers()[0].Stats().Active() == 1 })
	start := time.Now()
	// tester11: Shutdown says it cut calls, as the provider side does.
	if err := c.Shutdown(ctxT(t)); err == nil || !strings.Contains(err.Error(), "calls on 1 connection failed CHANNEL_INACTIVE") {
		t.Fatalf("consumer Shutdown: %v, want an error saying the calls on 1 connection were cut", err)
	}
	if took := time.Since(start); took > bound+3*time.Second {
		t.Errorf("consumer Shutdown took %v, bounded at %v", took, bound)
	}
	err := <-errc
	if spi.StatusOf(err) != spi.StatusChannelInactive || !errors.Is(err, spi.ErrRequestSent) ||
		!strings.Contains(err.Error(), "consumer shut down: its calls in flight were not answered within its shutdown timeout 300ms") {
		t.Fatalf("call past the bound = %v", err)
	}
	t.Logf("call past the bound: %v", err)
}

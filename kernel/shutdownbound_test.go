package kernel

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// stubborn's Stuck ignores its context: it returns only when release is
// closed, like a driver call made without a context.
type stubborn struct {
	started  chan struct{}
	release  chan struct{}
	returned chan struct{}
}

func (s *stubborn) Stuck(ctx context.Context) (string, error) {
	s.started <- struct{}{}
	<-s.release
	s.returned <- struct{}{}
	return "late", nil
}

// Shutdown is bounded by shutdown.timeout even when a method ignores its
// context (tester10 finding 3): it returns the AbandonedError soon after
// the bound, with the listener and the connections closed, and the
// method's goroutine is left to end when the method returns.
func TestShutdownDoesNotWaitForAMethodIgnoringItsContext(t *testing.T) {
	for _, tc := range []struct {
		dispatcher string
		byCtx      bool // bounded by Shutdown's ctx, shutdown.timeout being 10s
	}{{"all", false}, {"adaptive", false}, {"direct", false}, {"all", true}} {
		name := tc.dispatcher
		if tc.byCtx {
			name += "/ctx"
		}
		t.Run(name, func(t *testing.T) {
			const bound = 500 * time.Millisecond
			timeout := bound
			if tc.byCtx {
				timeout = 10 * time.Second
			}
			dispatcher := tc.dispatcher
			svc := &stubborn{started: make(chan struct{}, 1), release: make(chan struct{}), returned: make(chan struct{}, 1)}
			p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithShutdownTimeout(timeout))
			e, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/t.Stuck?dispatcher="+dispatcher))
			if err != nil {
				t.Fatal(err)
			}
			r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t.Stuck?timeout=20s")
			callErr := make(chan error, 1)
			go func() {
				_, err := r.Invoke(context.Background(), "Stuck")
				callErr <- err
			}()
			select {
			case <-svc.started:
			case <-time.After(5 * time.Second):
				t.Fatal("the call never reached the method")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if tc.byCtx {
				ctx, cancel = context.WithTimeout(context.Background(), bound)
			}
			defer cancel()
			start := time.Now()
			err = p.Shutdown(ctx)
			took := time.Since(start)
			var ae *AbandonedError
			if !errors.As(err, &ae) || ae.Calls != 1 || ae.Timeout != timeout || ae.ContextEnded != tc.byCtx {
				t.Errorf("Shutdown = %v, want an AbandonedError of 1 call, timeout %v, context ended %v", err, timeout, tc.byCtx)
			}
			// The bound plus the documented 0.5 s, with room for a
			// loaded machine; the method itself blocks until released.
			if took > bound+3*time.Second {
				t.Errorf("Shutdown took %v, bounded at %v", took, bound)
			}
			t.Logf("Shutdown returned after %v: %v", took, err)
			if c, err := net.DialTimeout("tcp", e.URL().Address(), time.Second); err == nil {
				_ = c.Close()
				t.Error("the listener still accepts after Shutdown")
			}
			select {
			case err := <-callErr:
				if err == nil {
					t.Error("the abandoned call succeeded")
				}
				t.Logf("consumer's call: %v", err)
			case <-time.After(5 * time.Second):
				t.Error("the consumer's call was not failed when the connection closed")
			}
			close(svc.release) // the method returns; its goroutines end (goleak)
			<-svc.returned
		})
	}
}

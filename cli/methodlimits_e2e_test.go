package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// Tester8 finding: Dubbo users limit one expensive method
// (<dubbo:method executes/actives>); the method-level forms of "executes"
// and "actives" were accepted and shown by --explain, but the limit filter
// was activated by the service-level key only, so nothing was limited.
// Both spellings, against a real serve process.
func TestMethodLevelExecutesIsEnforced(t *testing.T) {
	for _, key := range []string{"Sleep.executes=1", "methods.Sleep.executes=1"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", key)
			r := refer(t, p.url("demo.Echo")+"?timeout=5s")
			first := make(chan error, 1)
			go func() {
				var n int
				first <- r.Call(context.Background(), "Sleep", []any{1500}, &n)
			}()
			time.Sleep(500 * time.Millisecond) // the first Sleep runs
			var n int
			err := r.Call(context.Background(), "Sleep", []any{10}, &n)
			if spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted {
				t.Errorf("second Sleep while one runs: %v, want SERVER_THREADPOOL_EXHAUSTED from executes=1", err)
			}
			// Other methods are not limited.
			var s string
			if err := r.Call(context.Background(), "Echo", []any{"x"}, &s); err != nil {
				t.Errorf("Echo while Sleep runs: %v", err)
			}
			if err := <-first; err != nil {
				t.Errorf("first Sleep: %v", err)
			}
		})
	}
}

// The consumer's "actives" per method: a second Sleep waits for the first
// to finish (Dubbo's ActiveLimitFilter), and waits no longer than its own
// timeout.
func TestMethodLevelActivesIsEnforced(t *testing.T) {
	for _, key := range []string{"Sleep.actives=1", "methods.Sleep.actives=1"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			p := serve(t, "127.0.0.1:0", t.TempDir())
			r := refer(t, p.url("demo.Echo")+"?timeout=5s&"+key)
			first := make(chan error, 1)
			go func() {
				var n int
				first <- r.Call(context.Background(), "Sleep", []any{1500}, &n)
			}()
			time.Sleep(500 * time.Millisecond) // the first Sleep is in flight
			start := time.Now()
			var s string
			if err := r.Call(context.Background(), "Echo", []any{"x"}, &s); err != nil {
				t.Errorf("Echo while Sleep is in flight: %v", err)
			}
			echo := time.Since(start)
			start = time.Now()
			var n int
			err := r.Call(context.Background(), "Sleep", []any{10}, &n)
			waited := time.Since(start)
			if err != nil {
				t.Errorf("second Sleep: %v", err)
			}
			if waited < 500*time.Millisecond {
				t.Errorf("second Sleep answered in %v (Echo in %v): it did not wait for the first (actives=1)", waited, echo)
			}
			if err := <-first; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("first Sleep: %v", err)
			}
		})
	}
}

package kernel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A provider closing while calls stream to it fails none of them, even
// though Echo is not idempotent: the calls it ran are answered before it
// closes, and those it read after its go-away (or never read) fail with a
// CHANNEL_INACTIVE that failover may retry on the other provider. Before
// the go-away, a call sent in the moment between the provider's last
// drain check and the consumer seeing the read-only event failed with
// "the provider may have run it".
func TestProviderClosingUnderLoadFailsNoCall(t *testing.T) {
	for round := range 5 {
		pa, ea := provider(t)
		_, eb := provider(t)
		r := referConnected(t, "reconnect.backoff=1s&loadbalance=roundrobin", ea, eb)
		var stop atomic.Bool
		var calls, failed atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := 0; !stop.Load(); i++ {
					calls.Add(1)
					if _, err := r.Invoke(ctxT(t), "Echo", i); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
				}
			})
		}
		time.Sleep(100 * time.Millisecond)
		if err := pa.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		if n := failed.Load(); n > 0 {
			t.Fatalf("round %d: %d of %d calls failed while a provider closed; first: %v", round, n, calls.Load(), firstErr.Load())
		}
		_ = r.Close()
	}
}

package directory_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// slowServices is a registry whose Services answers only when its ctx
// ends, counting the look-ups.
type slowServices struct {
	spi.Registry
	calls atomic.Int64
}

func (r *slowServices) Services(ctx context.Context) ([]string, error) {
	r.calls.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// Failing calls of a reference the registry lists no provider of each ask
// NearMiss for the error's hint. A registry that takes the whole bound
// held them one after another behind NearMiss's lock (20 callers: up to
// 6 s for the last error); now one look-up runs, the others take the last
// answer at once, and a failed look-up is remembered like an answer.
func TestNearMissLooksUpOnceForConcurrentCallers(t *testing.T) {
	reg := &slowServices{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echoo?side=consumer"), reg, "slow://", (&factory{}).newInvoker, nil)
	start := time.Now()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if h := d.NearMiss(context.Background(), "Echo"); h != "" {
				t.Errorf("NearMiss = %q with an unanswering registry, want \"\"", h)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took > 3*directory.NearMissTimeout {
		t.Errorf("20 concurrent NearMiss took %v, want about one look-up (%v)", took.Round(time.Millisecond), directory.NearMissTimeout)
	}
	before := reg.calls.Load()
	d.NearMiss(context.Background(), "Echo")
	if n := reg.calls.Load(); n != 1 || before != 1 {
		t.Errorf("registry asked %d then %d times, want once: a failed look-up is reused for a second too", before, n)
	}
}

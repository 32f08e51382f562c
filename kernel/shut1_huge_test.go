package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// nu43 finding 4: a request over max(4 × payload, 64 MiB), which the
// provider does not read and closes the connection for, was reported to
// its caller as CHANNEL_INACTIVE "this call's request had been sent when the channel closed: the
// provider may have run it" (no failover for a method not idempotent)
// although it certainly did not run. The provider now answers it
// BAD_REQUEST naming the limit, not run, and sends the go-away before
// closing; the reference works again after.
func TestShut1HugeRequestIsAnsweredNotRun(t *testing.T) {
	for _, transport := range []string{"tcp", "smux"} {
		t.Run(transport, func(t *testing.T) {
			p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = p.Close() })
			e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+transport))
			if err != nil {
				t.Fatal(err)
			}
			r := referConnected(t, "transport="+transport+"&payload=100MiB&timeout=1m", e)
			// 70 MiB take seconds to encode and send under -race on a
			// loaded machine (over ctxT's 10 s once in CI)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			_, err = r.Invoke(ctx, "Echo", strings.Repeat("x", 70<<20))
			took := time.Since(start)
			if spi.StatusOf(err) != spi.StatusBadRequest || !strings.Contains(err.Error(), "exceeds 64 MiB, the most the provider reads") ||
				!strings.Contains(err.Error(), "not run") || strings.Contains(err.Error(), "may have run") {
				t.Fatalf("70 MiB request after %v: %v; want BAD_REQUEST naming the 64 MiB limit, not run", took, err)
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			eventually(t, "the reference calling again", func() bool {
				got, err := r.Invoke(ctxT(t), "Echo", "hi")
				return err == nil && got == "hi"
			})
		})
	}
}

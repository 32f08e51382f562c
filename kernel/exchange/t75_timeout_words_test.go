package exchange

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester75 #3: a --timeout that the provider's clock ends reads as the
// consumer's own timer does ("call S.M ... timed out after 300ms"), and
// says where it was noticed; it read "consumer deadline of 300ms passed
// on the provider", another event to a user. A raw consumer sends the
// request with a 300 ms deadline and no timer of its own, so the answer
// is the provider's.
func TestT75_ProviderTimeoutReadsAsTheConsumers(t *testing.T) {
	f := startServer(t, false, func(o *Options) {
		o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
			<-ctx.Done()
			return spi.Result{Err: ctx.Err()}
		})
	})
	h, body := rawCall(t, f, echoInv("Sleep", 1000), 300*time.Millisecond)
	if h.Status != spi.StatusServerTimeout {
		t.Fatalf("answer %+v; want SERVER_TIMEOUT", h)
	}
	const want = "exchange: call demo.Echo.Sleep timed out after 300ms on the provider (the call's deadline passed while the method ran)"
	if !strings.Contains(string(body), want) {
		t.Fatalf("answer %q; want it to hold %q", body, want)
	}
}

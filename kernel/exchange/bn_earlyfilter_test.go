package exchange

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// earlyFilter is the cause sdk/pluginrpc gives a call whose filter plugin
// the provider gave up on 30ms before the consumer's deadline.
type earlyFilter struct{ inFilter }

func (earlyFilter) GaveUpBefore() time.Duration { return 30 * time.Millisecond }

// tester88 #3: a provider's SERVER_TIMEOUT for a filter plugin given up
// on before the consumer's deadline (its ctx still live) names the filter
// and how early, says the method was not called, and is counted expired;
// it was passed on as the filter's own words.
func TestProviderAnswerForAFilterGivenUpEarlyNamesIt(t *testing.T) {
	f := startServer(t, false, func(o *Options) {
		o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
			d, _ := ctx.Deadline()
			time.Sleep(time.Until(d) - 30*time.Millisecond)
			if ctx.Err() != nil {
				t.Errorf("the deadline passed before the handler gave up")
			}
			return spi.Result{Err: &spi.Error{Status: spi.StatusServerTimeout, Message: `filter "acme.stamp": gave up`,
				Cause: earlyFilter{inFilter{errors.Join(context.DeadlineExceeded, context.Canceled)}}}}
		})
	})
	start := time.Now()
	h, body := rawCall(t, f, echoInv("Echo", "x"), 300*time.Millisecond)
	if took := time.Since(start); h.Status != spi.StatusServerTimeout || took >= 300*time.Millisecond {
		t.Fatalf("answer %+v after %v; want SERVER_TIMEOUT before the 300ms deadline", h, took)
	}
	const want = `exchange: call demo.Echo.Echo timed out after 300ms on the provider (filter "acme.stamp" ran until 30ms before the consumer's deadline, when the provider gave up on it so that this answer reaches the consumer before its own timer; the method was not called)`
	if !strings.Contains(string(body), want) {
		t.Fatalf("answer %q; want it to hold %q", body, want)
	}
	chans := serverChannels(f.srv)
	if !waitFor(5*time.Second, func() bool { return chans[0].Stats().Expired == 1 }) {
		t.Fatalf("expired = %d, want 1", chans[0].Stats().Expired)
	}
}

package exchange

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// inFilter is the cause sdk/pluginrpc gives a call whose deadline passed
// in a filter plugin, before the method was called.
type inFilter struct{ err error }

func (e inFilter) Error() string              { return e.err.Error() }
func (e inFilter) Unwrap() error              { return e.err }
func (inFilter) DeadlineBeforeMethod() string { return `filter "acme.stamp"` }

// nu77 #8: the provider's SERVER_TIMEOUT of a call whose deadline passed
// in a filter plugin, before the method was called, says so and names the
// filter; it said "while the method ran". A raw consumer sends the
// request with a 300 ms deadline and no timer of its own, so the answer
// is the provider's (as TestT75_ProviderTimeoutReadsAsTheConsumers).
func TestProviderTimeoutInAFilterSaysTheMethodWasNotCalled(t *testing.T) {
	f := startServer(t, false, func(o *Options) {
		o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
			<-ctx.Done()
			return spi.Result{Err: &spi.Error{Status: spi.StatusServerTimeout, Message: "filter \"acme.stamp\": the call's deadline passed",
				Cause: inFilter{errors.Join(context.DeadlineExceeded, ctx.Err())}}}
		})
	})
	h, body := rawCall(t, f, echoInv("Echo", "x"), 300*time.Millisecond)
	if h.Status != spi.StatusServerTimeout {
		t.Fatalf("answer %+v; want SERVER_TIMEOUT", h)
	}
	const want = `exchange: call demo.Echo.Echo timed out after 300ms on the provider (the call's deadline passed while filter "acme.stamp" ran; the method was not called)`
	if !strings.Contains(string(body), want) {
		t.Fatalf("answer %q; want it to hold %q", body, want)
	}
}

// rawCall sends inv to f's server from a raw connection, with timeout as
// its deadline and no timer of its own, and returns the answer.
func rawCall(t *testing.T, f *fixture, inv *spi.Invocation, timeout time.Duration) (protocol.Header, []byte) {
	t.Helper()
	c := rawConn(t, f)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, inv, timeout); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 1, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	if _, err := c.Write(fb.b); err != nil {
		t.Fatal(err)
	}
	h, body, err := readFrame(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return h, body
}

// fix-aj #2: a call whose deadline passed while it was served (in a
// filter plugin, as TestProviderTimeoutInAFilterSaysTheMethodWasNotCalled,
// or in the method) is answered SERVER_TIMEOUT without its result, so the
// channel's Expired counts it, as it counts one that expired waiting for a
// worker or finished late: 40 such calls counted 0.
func TestProviderTimeoutInAFilterIsCountedExpired(t *testing.T) {
	f := startServer(t, false, func(o *Options) {
		o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
			<-ctx.Done()
			return spi.Result{Err: &spi.Error{Status: spi.StatusServerTimeout, Message: "filter \"acme.stamp\": the call's deadline passed",
				Cause: inFilter{errors.Join(context.DeadlineExceeded, ctx.Err())}}}
		})
	})
	ch := f.dial(nil)
	const n = 40
	errs := make(chan error, n)
	for range n {
		go func() {
			errs <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 200*time.Millisecond).Err
		}()
	}
	for range n {
		if st := spi.StatusOf(<-errs); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout {
			t.Fatalf("call: status %v, want a timeout", st)
		}
	}
	chans := serverChannels(f.srv)
	if !waitFor(5*time.Second, func() bool { return chans[0].Stats().Expired == n }) {
		t.Fatalf("expired = %d, want %d", chans[0].Stats().Expired, n)
	}
}

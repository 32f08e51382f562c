package exchange

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
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
	c := rawConn(t, f)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fb := getFrame()
	if err := encodeRequest(fb, mpCodec{}, echoInv("Sleep", 1000), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: 1, Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
	if _, err := c.Write(fb.b); err != nil {
		t.Fatal(err)
	}
	h, body, err := readFrame(bufio.NewReader(c))
	if err != nil || h.Status != spi.StatusServerTimeout {
		t.Fatalf("answer %+v, %v; want SERVER_TIMEOUT", h, err)
	}
	const want = "exchange: call demo.Echo.Sleep timed out after 300ms on the provider (the consumer's deadline passed while the method ran)"
	if !strings.Contains(string(body), want) {
		t.Fatalf("answer %q; want it to hold %q", body, want)
	}
}

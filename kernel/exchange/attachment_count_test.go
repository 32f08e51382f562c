package exchange

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// manyAttachments returns n attachments k0..k(n-1).
func manyAttachments(n int) map[string]string {
	att := make(map[string]string, n)
	for i := range n {
		att["k"+strconv.Itoa(i)] = "v"
	}
	return att
}

// TestAttachmentCountLimit: a request or an answer carries at most
// protocol.MaxAttachments (4096) attachments, what the other side decodes.
// A consumer refuses a request over it before sending it
// (SERIALIZATION_ERROR, not sent); a provider answers a result over it
// BAD_RESPONSE saying the method ran, where the consumer used to fail
// decoding it; at the limit both go through, and the connection goes on.
func TestAttachmentCountLimit(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "single-stream", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, nil)
			ch := f.dial(nil)
			ctx := context.Background()

			inv := echoInv("Echo", "x")
			inv.Attachments = manyAttachments(protocol.MaxAttachments)
			if res := ch.Invoke(ctx, mpCodec{}, inv, 5*time.Second); res.Err != nil {
				t.Fatalf("a request with %d attachments: %v", protocol.MaxAttachments, res.Err)
			}
			f.svc.mu.Lock()
			got := len(f.svc.lastAtt)
			f.svc.mu.Unlock()
			if got != protocol.MaxAttachments {
				t.Fatalf("the provider got %d attachments; want %d", got, protocol.MaxAttachments)
			}

			sent := ch.Stats().FramesWritten
			inv = echoInv("Echo", "x")
			inv.Attachments = manyAttachments(protocol.MaxAttachments + 1)
			e := wantStatus(t, ch.Invoke(ctx, mpCodec{}, inv, 5*time.Second).Err, spi.StatusSerializationError)
			if want := "exchange: call demo.Echo.Echo: request carries 4097 attachments, over the 4096 a provider accepts (a fixed limit of the wire format, docs/wire.md); not sent"; e.Message != want {
				t.Fatalf("message %q\nwant      %q", e.Message, want)
			}
			if st := ch.Stats(); st.FramesWritten != sent || st.Pending != 0 {
				t.Fatalf("something was sent: %+v (frames before: %d)", st, sent)
			}

			res := ch.Invoke(ctx, mpCodec{}, echoInv("ManyAtt", protocol.MaxAttachments), 5*time.Second)
			if res.Err != nil || len(res.Attachments) != protocol.MaxAttachments {
				t.Fatalf("an answer with %d attachments: %v, %d received", protocol.MaxAttachments, res.Err, len(res.Attachments))
			}
			e = wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("ManyAtt", 10_000), 5*time.Second).Err, spi.StatusBadResponse)
			if want := "exchange: the answer carries 10000 attachments, over the 4096 a consumer accepts (a fixed limit of the wire format, docs/wire.md; the method ran)"; e.Message != want {
				t.Fatalf("message %q\nwant      %q", e.Message, want)
			}
			if f.logs.count("response over the attachment count") != 1 {
				t.Errorf("the provider logged no warning: %q", f.logs.lines())
			}
			if res := ch.Invoke(ctx, mpCodec{}, echoInv("Echo", 1), 2*time.Second); res.Err != nil {
				t.Fatalf("the same connection after it: %v", res.Err)
			}
		})
	}
}

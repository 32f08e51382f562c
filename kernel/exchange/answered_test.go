package exchange

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A CHANNEL_INACTIVE that the provider answers in a response frame (its
// service plugin died during the call) reached the provider, so the
// consumer sees it with spi.ErrRequestSent as Cause and the provider's
// message, while the channel itself stays up; a CHANNEL_INACTIVE generated
// locally for a request never sent still has no such Cause
// (TestChannelDeathTellsWhetherTheRequestWasSent).
func TestChannelInactiveAnsweredByTheProviderWasSent(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	ctx := context.Background()
	e := wantStatus(t, ch.Invoke(ctx, mpCodec{}, echoInv("Inactive"), time.Second).Err, spi.StatusChannelInactive)
	if !errors.Is(e, spi.ErrRequestSent) {
		t.Errorf("answered CHANNEL_INACTIVE: %v; want spi.ErrRequestSent as Cause", e)
	}
	if want := "the plugin process died during the call (it may have run)"; e.Message != want {
		t.Errorf("message %q, want the provider's %q", e.Message, want)
	}
	if res := ch.Invoke(ctx, mpCodec{}, echoInv("Echo", 1), time.Second); res.Err != nil {
		t.Fatalf("the channel after the answer: %v", res.Err)
	}
}

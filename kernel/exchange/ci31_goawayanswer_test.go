package exchange

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// A request the provider read after its go-away although its id is under
// the go-away's (two callers' requests written out of id order on smux)
// is answered unrun with SERVICE_NOT_FOUND; the consumer, which has the
// go-away, fails it as the go-away fails the requests it names:
// CHANNEL_INACTIVE "did not run", spi.ErrGoAway, not ErrRequestSent (the
// CI of e742de7: TestShut1SteadyConsumerDoesNotHoldTheDrainOpen/smux got
// the provider's SERVICE_NOT_FOUND).
func TestGoAwayThenUnrunAnswerIsNotRun(t *testing.T) {
	peer := newRawPeer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		h, _, err := readFrame(br)
		if err != nil {
			return
		}
		// the go-away names this request as read: the consumer keeps it pending
		ga := append(make([]byte, 0, protocol.HeaderLen+goAwayLen), make([]byte, protocol.HeaderLen)...)
		ga = append(ga, goAwayEvent)
		ga = binary.BigEndian.AppendUint64(ga, h.ID)
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: 1, Length: goAwayLen}.Put(ga)
		body := protocol.AppendString(protocol.AppendAttachments(nil, nil), "exchange: the provider is closing this connection and did not run the request (after its go-away)")
		resp := protocol.Header{Flags: mpCodec{}.ID() & protocol.CodecMask, Status: spi.StatusServiceNotFound, ID: h.ID, Length: uint32(len(body))}.Append(nil)
		c.Write(append(append(ga, resp...), body...))
		_, _, _ = readFrame(br) // until the consumer closes
	})
	ch := NewChannel(dialSession(t, peer.addr(), false), Options{Side: spi.Consumer, Codec: codecByID})
	defer func() { ch.Close("done"); ch.Wait() }()
	err := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second).Err
	e := wantStatus(t, err, spi.StatusChannelInactive)
	if !errors.Is(err, spi.ErrGoAway) || errors.Is(err, spi.ErrRequestSent) {
		t.Errorf("got %v; want the go-away's not-run error (ErrGoAway, not ErrRequestSent)", e)
	}
}

// A SERVER_ERROR answered after the provider's go-away (a kernel provider
// that abandons a call at its shutdown timeout sends the go-away first,
// then "... the call was abandoned") says the provider is shutting down:
// spi.ErrProviderShutdown, which failover's Repeats reads, so the retry of
// an idempotent call goes to another provider, never back to this one
// (tester nu78 finding 1). The status and message stay the provider's,
// and the call may have run: not ErrGoAway's not-run. The same answer
// without a go-away before it is a plain SERVER_ERROR.
func TestGoAwayThenServerErrorSaysProviderShutdown(t *testing.T) {
	for _, goAway := range []bool{true, false} {
		peer := newRawPeer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			h, _, err := readFrame(br)
			if err != nil {
				return
			}
			var out []byte
			if goAway {
				ga := append(make([]byte, 0, protocol.HeaderLen+goAwayLen), make([]byte, protocol.HeaderLen)...)
				ga = append(ga, goAwayEvent)
				ga = binary.BigEndian.AppendUint64(ga, h.ID)
				protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: 1, Length: goAwayLen}.Put(ga)
				out = ga
			}
			body := protocol.AppendString(protocol.AppendAttachments(nil, nil), "provider p shut down: its shutdown timeout passed while s.S.Echo was running; the call was abandoned")
			resp := protocol.Header{Flags: mpCodec{}.ID() & protocol.CodecMask, Status: spi.StatusServerError, ID: h.ID, Length: uint32(len(body))}.Append(nil)
			c.Write(append(append(out, resp...), body...))
			_, _, _ = readFrame(br) // until the consumer closes
		})
		ch := NewChannel(dialSession(t, peer.addr(), false), Options{Side: spi.Consumer, Codec: codecByID})
		err := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), 5*time.Second).Err
		ch.Close("done")
		ch.Wait()
		e := wantStatus(t, err, spi.StatusServerError)
		if !strings.Contains(e.Message, "the call was abandoned") || errors.Is(err, spi.ErrGoAway) {
			t.Errorf("go-away %v: got %v; want the provider's SERVER_ERROR, not the go-away's not-run", goAway, err)
		}
		if got := errors.Is(err, spi.ErrProviderShutdown); got != goAway {
			t.Errorf("go-away %v: errors.Is(%v, spi.ErrProviderShutdown) = %v; want %v", goAway, err, got, goAway)
		}
	}
}

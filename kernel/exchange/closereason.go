package exchange

import (
	"context"
	"unicode/utf8"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// closeReasonEvent is the first byte of the body of the one-way event a
// provider sends just before its heartbeat closes a connection (an idle
// consumer, a dead one) or its ping-flood guard does: 'C', then why, in
// UTF-8 (at most maxCloseReason bytes). The consumer keeps it and adds it
// to the close's reason ("closed by peer (the provider's reason: ...)"),
// so a consumer that does not ping learns from the close itself what to
// change, not only "closed by peer". Unlike the go-away it promises
// nothing about the requests: a call in flight still "may have run".
// Peers that predate it drop it unread, as any one-way event they do not
// know (docs/wire.md, Versioning).
const (
	closeReasonEvent = 'C'
	maxCloseReason   = 1024
)

// tellPeerWhy queues the close-reason event and waits goAwayFlush at most
// for it to be written (provider side; a consumer sends none). It does
// nothing on a channel already dying.
func (c *Channel) tellPeerWhy(reason string) {
	if c.opts.Side != spi.Provider {
		return
	}
	select {
	case <-c.dying:
		return
	default:
	}
	c.w.enqueue(closeReasonFrame(reason, c.nextID.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), goAwayFlush)
	defer cancel()
	c.flush(ctx)
}

// closeReasonFrame returns the close-reason event carrying reason (cut
// to maxCloseReason bytes, on a rune boundary), with request id id.
func closeReasonFrame(reason string, id uint64) []byte {
	if len(reason) > maxCloseReason {
		reason = reason[:maxCloseReason]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	f := make([]byte, protocol.HeaderLen, protocol.HeaderLen+1+len(reason))
	f = append(append(f, closeReasonEvent), reason...)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagEvent, ID: id, Length: uint32(1 + len(reason))}.Put(f)
	return f
}

// takeCloseReason keeps the provider's close-reason event (consumer side).
func (c *Channel) takeCloseReason(body []byte) {
	if c.opts.Side != spi.Consumer {
		return
	}
	r := string(body[1:])
	if len(r) > maxCloseReason {
		r = r[:maxCloseReason]
	}
	c.peerReason.Store(&r)
}

// withPeerReason adds the provider's close-reason event, when one came,
// to reason, the reader's account of the close ("closed by peer").
func (c *Channel) withPeerReason(reason string) string {
	if r := c.peerReason.Load(); r != nil {
		return reason + " (the provider's reason: " + *r + ")"
	}
	return reason
}

// PingsRead returns the two-way heartbeats read from the peer on this
// channel (spi.PingCounter): the idle provider tells a consumer that never
// pinged from one that stopped. Safe for concurrent use.
func (c *Channel) PingsRead() int64 { return c.pingsRead.Load() }

var _ spi.PingCounter = (*Channel)(nil)

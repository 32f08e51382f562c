package exchange

import (
	"context"
	"time"

	"github.com/airnode/airnode/spi"
)

// ChannelStats is a snapshot of a channel's counters.
type ChannelStats struct {
	Pending       int   // calls waiting for a response (Ping included)
	LateResponses int64 // responses that arrived after their call had timed out or been cancelled, dropped
	InFlight      int   // provider: requests being served
	FramesRead    int64 // frames read, all streams
	FramesWritten int64 // frames written, all streams
	Writes        int64 // write calls on the transport (FramesWritten/Writes is the coalescing factor)
}

// Channel is one live session with frames on it (implements spi.Channel).
type Channel struct {
	sess spi.Session
	opts Options
}

// NewChannel wraps sess and starts its read loop(s) and writer.
func NewChannel(sess spi.Session, opts Options) *Channel {
	return &Channel{sess: sess, opts: opts}
}

// Invoke sends inv encoded with codec and waits for the response, at most
// timeout (≤ 0: only ctx bounds the call).
func (c *Channel) Invoke(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout time.Duration) spi.Result {
	return spi.Result{Err: spi.Errorf(spi.StatusClientError, "exchange: not implemented")}
}

// Ping sends a two-way heartbeat event and waits for the answer or ctx.
func (c *Channel) Ping(ctx context.Context) error { return nil }

// Close closes the channel; idempotent.
func (c *Channel) Close(reason string) {}

// Wait blocks until every goroutine of the channel has exited.
func (c *Channel) Wait() {}

// Done is closed when the channel dies.
func (c *Channel) Done() <-chan struct{} { return nil }

// Side returns the side of this end.
func (c *Channel) Side() spi.Side { return c.opts.Side }

// RemoteAddr returns the peer's "host:port".
func (c *Channel) RemoteAddr() string { return c.sess.RemoteAddr().String() }

// LastRead returns when the last frame was read.
func (c *Channel) LastRead() time.Time { return time.Time{} }

// LastWrite returns when the last frame was written.
func (c *Channel) LastWrite() time.Time { return time.Time{} }

// Stats returns a snapshot of the channel's counters.
func (c *Channel) Stats() ChannelStats { return ChannelStats{} }

var _ spi.Channel = (*Channel)(nil)

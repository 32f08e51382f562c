package spi

import (
	"context"
	"time"
)

// HeartbeatBuilder is the "heartbeat" extension point (URL key
// "heartbeat", default "idle"; "dual" and "none" are bundled). Build reads
// heartbeat.interval, heartbeat.timeout, heartbeat.retries,
// heartbeat.ping.timeout and heartbeat.ping.on.timeout (TimeoutCheck) and
// rejects inconsistent values with an error naming the keys.
type HeartbeatBuilder interface {
	Name() string
	// Build returns the strategy for the connections of u. Pure: no I/O,
	// no goroutine. It runs on Export's goroutine (the provider's
	// connections) and on the one delivering a new provider (the
	// consumer's: Refer's, or a registry's notification), and nothing
	// bounds it (package doc, "What the kernel does not bound").
	Build(u URL) (Heartbeat, error)
}

// Heartbeat watches channels for liveness.
type Heartbeat interface {
	// Watch starts watching ch and returns a function that stops the watch
	// and waits for every goroutine and timer it started. The kernel calls
	// stop when the channel dies or closes; stop is idempotent.
	Watch(ch Channel) (stop func())
}

// Channel is what a heartbeat strategy sees of one live connection.
type Channel interface {
	// Side is Consumer on the dialing end, Provider on the accepting end.
	Side() Side
	// RemoteAddr is the peer's "host:port".
	RemoteAddr() string
	// LastRead and LastWrite are updated by every frame read or written;
	// LastRead also by each read of a body over 64 KiB still arriving,
	// so "nothing read for X" means no byte read for X. LastWrite is
	// stamped when a frame's write starts: a large frame blocked in the
	// socket behind a slow link leaves it old, so a side writing one
	// reads nothing and writes nothing new for as long as the link takes.
	// Such a side learns that the peer is alive from what the peer
	// acknowledged: the exchange's channel implements AckCounter (ok
	// false when its session cannot tell), and the bundled strategies
	// count the peer acknowledging more of a backlog of 64 KiB or more
	// between two of their checks as a read (a large frame on a slow link
	// is read for longer than the heartbeat timeout, and pings queue behind
	// it).
	LastRead() time.Time
	LastWrite() time.Time
	// Ping sends a two-way heartbeat event and waits for the peer's answer
	// or for ctx to end. Safe for concurrent use.
	Ping(ctx context.Context) error
	// Close closes the channel with a logged reason. On the consumer the
	// connection manager then reconnects; on the provider the channel is
	// gone. Idempotent.
	Close(reason string)
	// Done is closed when the channel is closed.
	Done() <-chan struct{}
}

// Established is implemented by channels that can tell whether their
// connection is up: on the consumer, whether the provider has sent
// anything on it yet (the answer to the connection's first ping comes
// first); a provider's channel always is. A strategy that closes a
// channel not established (its first ping unanswered: a hung or paused
// provider) ends a connection attempt, not a connection: the kernel
// counts that attempt as a failed connect
// (airnode_consumer_connect_failures_total{reason="heartbeat"}) and
// the bundled strategies count no heartbeat close for it
// (airnode_channels_idle_closed_total). Safe for concurrent use.
type Established interface {
	Established() bool
}

// ExpectedCloser is implemented by channels that can log a heartbeat's close
// at Info, as an expected one, rather than at Warn: the idle provider closing
// an idle connection whose consumer runs heartbeat=none, which sends nothing
// on an idle channel by design. A strategy type-asserts its Channel to it
// and falls back to Close.
type ExpectedCloser interface {
	// CloseExpected is Close, its "channel closed" line logged at Info.
	CloseExpected(reason string)
}

// PingCounter is implemented by channels that count the two-way
// heartbeats (pings) read from the peer. The idle provider uses it to tell
// a consumer that never pinged (a hand-written client without a heartbeat,
// whose idle connection it closes as expected) from one that stopped
// pinging (hung or dead). A strategy type-asserts its Channel to it.
type PingCounter interface {
	// PingsRead returns the pings read on the channel so far. It does
	// not block; safe for concurrent use.
	PingsRead() int64
}

// PeerHeartbeat is implemented by channels that can tell the peer's
// heartbeat settings: the consumer sends its heartbeat
// keys in its first ping, the provider answers with its own. A heartbeat
// strategy type-asserts its Channel to this interface; ok is false until
// the peer's settings arrived (or when the peer sends none).
type PeerHeartbeat interface {
	// PeerHeartbeat returns a URL whose parameters are the peer's
	// heartbeat keys ("heartbeat", "heartbeat.interval", ...).
	PeerHeartbeat() (peer URL, ok bool)
}

// TimeoutCheck is implemented by heartbeat strategies that have a
// consumer's exchange check a channel at once when a call on it times out
// SERVER_TIMEOUT with nothing read from the channel since the call's
// request was sent — the sign of a provider that is black-holed (packets
// dropped, no RST) or hung, which a read-idle heartbeat on a channel
// carrying calls notices only after its own interval. The exchange then
// sends one ping (one outstanding at a time, at most one per
// max(1 s, the call's timeout)) that may wait max(1 s, the call's
// timeout), bounded by maxWait when it is positive; unanswered, it closes
// the channel (CHANNEL_INACTIVE), so the connection manager redials and the
// directory stops picking the provider, as after a heartbeat's own
// verdict. A provider that answers the ping is slow, not dead, and is left
// alone. The exchange also starts that check, its ping waiting 1 s
// (bounded by maxWait), when calls have waited on a channel with nothing
// read for max(3 s, half the longest of their timeouts)
// (exchange.QuietBound), before any of them times out. The idea is
// HTTP/2 clients': Go's x/net/http2 Transport closes a
// connection whose PING goes unanswered for PingTimeout, and Chrome pings
// a connection it has read nothing from lately. The bundled strategies
// implement it, on by default (URL key heartbeat.ping.on.timeout); a
// Heartbeat without it gets no such check.
type TimeoutCheck interface {
	// TimeoutCheck reports whether the check is on, and the longest its
	// ping may wait (≤ 0: bounded by the call's timeout alone). Called on
	// the timeout path only; must not block.
	TimeoutCheck() (maxWait time.Duration, on bool)
}

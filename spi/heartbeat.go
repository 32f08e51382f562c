package spi

import (
	"context"
	"time"
)

// HeartbeatBuilder is the "heartbeat" extension point (URL key
// "heartbeat", default "idle"; "dual" and "none" are bundled). Build reads
// heartbeat.interval, heartbeat.timeout, heartbeat.retries and
// heartbeat.ping.timeout and rejects inconsistent values with an error
// naming the keys.
type HeartbeatBuilder interface {
	Name() string
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
	// LastRead and LastWrite are updated by every frame read or written.
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

// PeerHeartbeat is implemented by channels that can tell the peer's
// heartbeat settings (issue 4 item 7): the consumer sends its heartbeat
// keys in its first ping, the provider answers with its own. A heartbeat
// strategy type-asserts its Channel to this interface; ok is false until
// the peer's settings arrived (or when the peer sends none).
type PeerHeartbeat interface {
	// PeerHeartbeat returns a URL whose parameters are the peer's
	// heartbeat keys ("heartbeat", "heartbeat.interval", ...).
	PeerHeartbeat() (peer URL, ok bool)
}

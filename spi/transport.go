package spi

import (
	"context"
	"errors"
	"io"
	"net"
)

// TransportBuilder is the "transport" extension point (URL key "transport",
// default "smux"). A transport moves bytes between a consumer and a
// provider; the kernel's exchange layer puts frames on top of it.
type TransportBuilder interface {
	// Name is the extension name ("smux", "tcp").
	Name() string
	// Build validates the transport keys of u and returns a Transport. It
	// does no I/O and starts no goroutine. It runs on Export's goroutine
	// (provider) and on the one delivering a new provider (consumer:
	// Refer's, or a registry's notification), and nothing bounds it: one
	// that blocks keeps that Export or Refer from returning past its ctx
	// (package doc, "What the kernel does not bound"). Listen and Dial,
	// by contrast, are bounded.
	Build(u URL) (Transport, error)
}

// Transport listens and dials. Safe for concurrent use.
type Transport interface {
	// Listen binds addr ("host:port"; port 0 picks a free one) and returns a
	// listener of sessions. Errors are fatal to the export. Listen takes no
	// ctx: the kernel stops waiting at the end of Export's ctx (the export
	// fails, naming the transport) and closes a listener returned later.
	Listen(addr string) (Listener, error)
	// Dial opens a session to addr, giving up when ctx ends (the kernel puts
	// connect.timeout on ctx). A dial error fails the call or, in the
	// consumer's connection manager, schedules a reconnect.
	Dial(ctx context.Context, addr string) (Session, error)
}

// Listener accepts sessions. Accept blocks; Close unblocks it with
// net.ErrClosed and is idempotent.
type Listener interface {
	Accept() (Session, error)
	// Addr is the bound address, which the provider publishes: it must
	// give host:port, as a *net.TCPAddr or an address whose String is
	// host:port (net.SplitHostPort parses it), with the port actually
	// bound (the one picked for port 0). Export fails on an address with
	// no port (a unix socket's path), naming the transport.
	Addr() net.Addr
	// Close should return promptly: the kernel's shutdown waits for it
	// only until its ctx ends, then leaves it running and says so.
	Close() error
}

// Session is one live connection between a consumer and a provider (a
// "channel" to the exchange). It carries one or more byte streams: a
// multiplexing transport (smux) opens and accepts many; a plain one (tcp)
// has exactly one.
//
// The exchange reads frames from every stream it opens or accepts and may
// write a frame on any stream; frames are matched by request id, not by
// stream.
type Session interface {
	// Open returns a new stream. On a session that is not multiplexed the
	// first call returns the session's single stream and later calls return
	// ErrNotMultiplexed. May block briefly; safe for concurrent use.
	Open() (io.ReadWriteCloser, error)
	// Accept blocks until the peer opens a stream or the session dies. On a
	// session that is not multiplexed, the accepting side (provider) gets the
	// single stream once, the dialing side never gets one.
	Accept() (io.ReadWriteCloser, error)
	// Multiplexed reports whether Open can return more than one stream.
	Multiplexed() bool
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
	// Close closes the session and all its streams; idempotent.
	Close() error
	// Done is closed when the session is dead, for whatever reason.
	Done() <-chan struct{}
}

// OpeningRecognizer is an optional interface of a TransportBuilder: it
// recognizes how its transport's consumers open a connection. A provider
// serving another transport whose exchange reads, where a connection's
// first frame header should be, bytes that are no airnode frame asks every
// transport of its catalogs that implements it: when one recognizes them,
// the close is a transport mismatch naming that transport, logged at Info
// and not counted as a protocol error (a consumer whose URL key transport
// differs, such as airnode health's first try over the default smux
// against a provider serving tcp), rather than a peer breaking the protocol
// (Warn, airnode_channels_closed_total{reason="protocol_error"}). Both
// bundled transports implement it: smux (a tcp listener's question) and
// tcp (a smux listener's, which keeps a connection's first bytes for its
// protocol error).
//
// first holds the connection's first 16 bytes (an airnode frame header's
// length), on a smux listener at least 8 (what smux read before it
// failed). RecognizesOpening must not block, is called concurrently, and
// should be strict: bytes it recognizes by mistake hide a broken peer.
type OpeningRecognizer interface {
	RecognizesOpening(first []byte) bool
}

// ErrNotMultiplexed is returned by Session.Open on a transport with a single
// stream per session once that stream has been taken.
var ErrNotMultiplexed = errors.New("transport: session is not multiplexed")

// TryWriter is an optional interface of a Session's streams: TryWrite
// writes what the connection takes at once, without waiting — n bytes of p
// (0 when it would have to wait), or an error that has already failed the
// session. The exchange uses it to write a frame from the calling
// goroutine when its writer is idle, handing only what is left to a writer
// goroutine, so a caller never waits on a peer that stopped reading.
// Streams that cannot (TLS; on a multiplexed session, streams whose writes
// go through the multiplexer's own goroutines) do not implement it.
type TryWriter interface {
	TryWrite(p []byte) (n int, err error)
}

// Withdrawer is an optional interface of a Session's streams whose Write
// may wait before it hands any byte to the connection: a multiplexer's
// flow control (smux's window and session credit) holds a large frame's
// stream back while the peer reads nothing. The exchange writes a request
// over 64 KiB on a stream of its own; when the call's deadline passes it
// asks the stream, so that a request none of whose bytes left is answered
// CLIENT_TIMEOUT (never sent, safe to retry), as one still in its own
// queue is, not SERVER_TIMEOUT.
//
// Withdraw reports whether none of the bytes written on the stream so far
// has been handed to the connection, and if so makes sure none ever is: a
// Write waiting for room returns, and it and every later Write fail with
// ErrWithdrawn. It returns false once any byte was handed over (the peer
// may read it), leaving the stream as it is; true again when called after
// a successful Withdraw. It must not block and is safe to call
// concurrently with Write. It closes nothing: the writer closes the
// stream, which the peer sees end before any byte of it.
type Withdrawer interface {
	Withdraw() bool
}

// ErrWithdrawn is the error of a Write on a stream after a successful
// Withdraw (Withdrawer): nothing of what was written reached the
// connection.
var ErrWithdrawn = errors.New("transport: stream withdrawn before any of its bytes were sent")

// AckCounter is an optional interface of a Session on a connection whose
// peer acknowledges what it receives (TCP). Acked returns how many bytes
// this side wrote that the peer's kernel has acknowledged, counted since
// the connection opened, and how many are written and not acknowledged
// yet (queued in this host's socket or in flight); ok is false when it
// cannot tell (off Linux, no TCP socket underneath). It must not block,
// and is safe for concurrent use. The exchange's channel forwards it to
// the heartbeat strategies (Channel), which count the peer acknowledging
// more of a backlog between two checks as a sign of life, as a read. The
// exchange itself reads it in a consumer's liveness check
// (heartbeat.ping.on.timeout): a check whose
// ping was queued behind a backlog of unacknowledged bytes (a large frame
// on a slow link) and during whose wait the peer acknowledged more is a
// busy link, not a dead one, and the channel is left open; a dead or
// black-holed path acknowledges nothing, and a hung peer nothing once its
// receive window is full. A session without it gets no such allowance.
type AckCounter interface {
	Acked() (acked, unacked uint64, ok bool)
}

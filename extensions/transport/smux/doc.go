// Package smux is airnode's default transport, registered as "smux": one TCP
// connection per session, multiplexed into streams by github.com/xtaci/smux
// protocol v2. Either side may Open streams and the other Accepts them.
//
// smux's own keepalive is off (DESIGN §6: the heartbeat extension is the only
// liveness mechanism), and so is TCP keepalive; TCP_NODELAY is on.
// Session.Done is closed when the session is closed, when the connection
// fails (read or write error, reset, EOF), or when the peer breaks the smux
// protocol.
//
// URL keys:
//
//	| key         | type | unit  | default | bounds          | meaning                                        |
//	|-------------|------|-------|---------|-----------------|------------------------------------------------|
//	| smux.buffer | size | bytes | 8MiB    | 256KiB .. 1GiB  | receive buffer per session; each stream's      |
//	|             |      |       |         |                 | flow-control window is a quarter of it         |
//
// and the TLS keys of internal/tlsconf (tls, tls.cert, tls.key, tls.ca,
// tls.servername): with tls=true smux runs over TLS, the consumer's
// handshake within the dial's context, the provider's on first use under
// a deadline.
//
// Costs (measured, BenchmarkStream100B and an idle-session count): a stream
// Write passes through smux's shaper and writer goroutines, so write
// coalesced batches rather than one frame per Write; a session holds about
// 72 KiB of smux's fixed queues and three goroutines, where a "tcp" session
// holds under 1 KiB and none.
//
// Transport, Listener and Session are safe for concurrent use; a stream is
// read by one goroutine and written by one goroutine at a time. Close of a
// session or listener is idempotent.
package smux

// Package tcp is the transport registered as "tcp": Apache Dubbo's classic
// design, one TCP connection per session and no multiplexing layer; the
// exchange pipelines frames with request ids on the connection itself.
//
// A session has exactly one stream, the connection. The consumer gets it from
// the first Open; the provider from the first Accept (or Open). Later Opens
// return spi.ErrNotMultiplexed, later Accepts block until the session dies.
// Closing the stream closes the session. Session.Done is closed by Close, or
// as soon as a Read or Write on the stream fails (EOF, reset): the exchange
// always reads, so a dead peer is noticed at once. Neither TCP keepalive nor
// any other liveness check runs here (the heartbeat extension owns
// liveness); TCP_NODELAY is on.
//
// The stream implements LazyReader: ReadLazy waits for data holding no
// buffer and only then takes one from the caller's pool (through the
// socket's syscall.RawConn, with the same system calls as Read), so a
// reader need not pin a read buffer to every idle connection. Over TLS it
// falls back to a plain Read.
//
// URL keys: only the TLS keys of internal/tlsconf (tls, tls.cert, tls.key,
// tls.ca, tls.servername, and the provider's tls.client.names, the names
// a consumer's certificate must hold under mutual TLS): with tls=true the
// connection is TLS, the
// consumer's handshake runs within the dial's context and the provider's
// on first use under a deadline.
//
// A listener that cannot accept (out of file descriptors: EMFILE, ENFILE)
// retries with a backoff of 5 ms doubling to 1 s, as net/http does, logs
// "tcp: accept failed; retrying" at Warn (one line per doubling, then one
// every 10 s) and "accepting connections again" at Info when it can (a
// recovery within 10 s of the last such line is only counted, as
// brief_recoveries in the next line), and counts each failure (airnode_accept_errors_total); see
// internal/netaccept. Its logger is the node's (spi.LoggerUser), else
// slog.Default(); under tls=true a failed handshake ("tlsconf: handshake
// failed; connection closed", rate-bounded) goes to the same logger.
//
// The builder recognizes its consumers' opening (spi.OpeningRecognizer:
// an airnode request header), so that a provider serving smux closes a
// tcp consumer's connection as a transport mismatch at Info.
//
// The listener accepts every connection: the provider's connection limit
// (URL keys accepts and accepts.per.ip) is the kernel's exchange server's,
// which closes a session beyond it at once after Accept, before reading
// from it.
//
// Transport, Listener and Session are safe for concurrent use; the stream is
// read by one goroutine and written by one goroutine at a time. Close is
// idempotent. The transport starts no goroutine.
package tcp

// Package smux is airnode's default transport, registered as "smux": one TCP
// connection per session, multiplexed into streams by github.com/xtaci/smux
// protocol v2. Either side may Open streams and the other Accepts them.
//
// smux's own keepalive is off (the heartbeat extension is the only
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
// tls.servername, and the provider's tls.client.names, the names a
// consumer's certificate must hold under mutual TLS): with tls=true smux
// runs over TLS, the consumer's handshake within the dial's context, the
// provider's on first use under a deadline.
//
// smux's receiver reads each frame's header and then its data; on a plain
// socket it reads through a 16 KiB read-ahead buffer, taken from a shared
// pool when data is there and given back when drained, so that a batch of
// small frames costs one read system call and a waiting session holds no
// buffer (provider read calls per call: c=1 2.95 -> 2.03, c=100 about 0.1
// -> 0.035; BenchmarkStream100B write=1 about -20%, pingpong -5%).
//
// The session's primary stream — the first a consumer opens, which is the
// first its provider accepts: the exchange's long-lived stream of small
// frames — writes its data frames straight to the socket, and on a plain
// socket implements spi.TryWriter, as a tcp stream does; every other
// stream writes through smux's shaper and sender goroutines (three
// goroutine hand-offs per Write). The frames on the wire are smux's own,
// so peers of any version read them. The primary stream keeps the send
// window the peer grants as smux's streams do (window.go: it takes the
// peer's window updates from the frames smux's receiver reads); it had
// none at first, and a consumer pipelining 60 KiB requests at c=1000
// filled its provider's session buffer and stuck the connection for good
// (tester56). direct.go has the details. Against
// writing through smux (alternated pairs, bench/profprovider -transport
// smux and airnode bench, fresh provider per run): c=1 5.0-6.1k -> 7.9-8.4k
// calls/s, c=100 88-94k -> 105-113k, provider CPU per call 8.6-9.2 ->
// 6.8-7.2 µs at c=100; futex calls per call on the provider 2.8 -> 2.0
// (c=1) and 0.10 -> 0.02 (c=100).
//
// Under TLS every write — the primary stream's frames and smux's sender's
// — is copied into one buffer of up to 64 KiB and handed to the TLS
// connection at once, so a frame's 8-byte header shares its data's TLS
// record; written buffer by buffer, each header was a record and a
// write(2) of its own. Alternated pairs (airnode serve --tls-cert and
// airnode bench -p tls=true, under a tester's load): c=1 4.0-4.2k ->
// 6.7-7.6k calls/s (2 of 2), c=100 provider CPU 8.0-10.2 -> 6.0-7.5 µs a
// call (6 of 6), calls/s 42-83k -> 54-98k (5 of 6 faster).
//
// On a plain socket the primary stream also reads for itself (demux.go):
// its reader reads the socket while it waits for data and hands every
// other frame to smux's receiver, which reads the socket only before the
// primary stream's first read and when its reader has stayed away 2 to 4
// ms while a read or write of the session waits for the socket, 20 to 40
// ms otherwise (a provider that stopped reading while its answers wait
// must still read the window updates that let them go), and for another
// stream's data frame of 4 KiB or more, which it reads from the socket
// straight into its buffer. The primary stream's reader
// sends its window updates itself, and its data no longer counts against
// smux's session buffer. Before, smux's receiver woke the primary
// stream's reader for every batch and a Read returned one frame; against
// that (alternated pairs, bench/profprovider -transport smux and airnode
// bench, both sides new): c=1 8.2-8.8k -> 9.5-10.8k calls/s, provider
// futex calls a call 1.95 -> 0.19, provider CPU 76-82 -> 52-59 µs a call;
// c=100 provider system calls a call 0.22-0.24 -> 0.12 (tcp's: 0.12),
// writev 0.10 -> 0.04.
//
// The other streams a side opens (frames over 64 KiB, one stream each)
// count what they write against a credit of half the peer's session
// buffer until the peer begins to read them (credit.go): smux's session
// buffer is shared by all of a session's streams and, once full, its
// receiver reads nothing more, window updates included, so large requests
// a busy provider had not read yet stalled the large answers beside them
// for good (tester57). A Write that finds the credit spent waits, as for
// smux's own window. Until the first of its bytes is handed to smux such a
// stream can be withdrawn (spi.Withdrawer): the waiting Write returns
// spi.ErrWithdrawn and the stream, once closed, ends empty at the peer;
// the exchange then answers the large request's timeout CLIENT_TIMEOUT
// (never sent), as tcp's for a request still in the exchange's queue.
//
// Costs (measured, BenchmarkStream100B and BenchmarkIdleSession): a Write
// on a stream other than the primary one passes through smux's shaper and
// writer goroutines, so write coalesced batches rather than one frame per
// Write. An idle provider
// session holds smux's three goroutines (about 6.5 KiB of stack) and 70 KiB
// of heap, nearly all of it smux's fixed queues: 56 KiB for 1024 queued
// writes and 8 KiB for a backlog of 1024 streams. On a fresh heap the
// write queue's pages are never touched, so a session costs about 16 KiB
// of resident memory; where the heap reuses memory freed by earlier
// connections the runtime zeroes the queues on allocation and the whole
// 70 KiB becomes resident (airnode bench --idle 10000 run twice against
// one provider: 43 KiB per connection the first time, 77 KiB the second).
// A "tcp" session holds under 1 KiB and no goroutine.
//
// A listener that cannot accept (out of file descriptors: EMFILE, ENFILE)
// retries with a backoff of 5 ms doubling to 1 s, as net/http does, logs
// "smux: accept failed; retrying" at Warn (one line per doubling, then one
// every 10 s) and "accepting connections again" at Info when it can (a
// recovery within 10 s of the last such line is only counted, as
// brief_recoveries in the next line), and counts each failure (airnode_accept_errors_total); see
// internal/netaccept. Its logger is the node's (spi.LoggerUser), else
// slog.Default(); under tls=true a failed handshake ("tlsconf: handshake
// failed; connection closed", rate-bounded) goes to the same logger.
//
// A provider's session keeps its connection's first 16 bytes (the first
// reads only pass through the code that keeps them): when smux cannot
// read them, its ProtocolError names the first 8 and gives them
// (FirstBytes) to the exchange, which closes a tcp consumer's opening as
// a transport mismatch at Info (spi.OpeningRecognizer), not as a
// protocol error.
//
// The listener accepts every connection: the provider's connection limit
// (URL keys accepts and accepts.per.ip) is the kernel's exchange server's,
// which closes a session beyond it at once after Accept, before reading
// from it.
//
// Transport, Listener and Session are safe for concurrent use; a stream is
// read by one goroutine and written by one goroutine at a time. Close of a
// session or listener is idempotent.
package smux

package smux

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	xsmux "github.com/xtaci/smux"

	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/internal/rawsock"
	"github.com/airnode/airnode/internal/smuxread"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this transport.
const Name = "smux"

// Builder builds smux transports. The zero value is ready to use.
type Builder struct{}

// Name returns "smux".
func (Builder) Name() string { return Name }

// Build validates the smux keys of u (see the package doc) and returns a
// Transport. It does no I/O and starts no goroutine.
func (Builder) Build(u spi.URL) (spi.Transport, error) {
	cfg, err := parseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("smux: %w", err)
	}
	t := newTransport(cfg)
	if err := xsmux.VerifyConfig(t.mux); err != nil { // the bounds above make this a bug
		return nil, fmt.Errorf("smux: %w", err)
	}
	if t.tls, err = tlsconf.Parse(u); err != nil {
		return nil, fmt.Errorf("smux: %w", err)
	}
	return t, nil
}

// Transport dials and listens for smux sessions over TCP. Safe for
// concurrent use.
type Transport struct {
	mux *xsmux.Config
	tls tlsconf.Settings // TLS under smux when tls=true
	log *slog.Logger     // UseLogger's; nil: slog.Default()
}

// UseLogger makes the transport's listeners log to l (spi.LoggerUser): a
// failed accept (out of file descriptors) at Warn, retried with backoff,
// and under tls=true a failed TLS handshake at Warn. Call it before Listen.
func (t *Transport) UseLogger(l *slog.Logger) { t.log = l }

func newTransport(cfg config) *Transport {
	return &Transport{mux: &xsmux.Config{
		Version:           2,
		KeepAliveDisabled: true, // the heartbeat extension owns liveness
		MaxFrameSize:      frameSize,
		MaxReceiveBuffer:  cfg.buffer,
		MaxStreamBuffer:   cfg.buffer / 4,
	}}
}

// Listen binds addr ("host:port", port 0 picks a free one).
func (t *Transport) Listen(addr string) (spi.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("smux: %w", err)
	}
	if t.tls.Enabled {
		cfg, err := t.tls.Server()
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("smux: %w", err)
		}
		l = tlsconf.Listener(l, cfg, 0, t.log, nil)
	}
	a := netaccept.New(l, Name)
	a.UseLogger(t.log)
	return &Listener{a: a, mux: t.mux}, nil
}

// Dial connects to addr and returns the consumer side of a session. It gives
// up when ctx ends; the error then wraps ctx's error. No smux handshake
// happens on the wire: the session is usable as soon as TCP connects.
func (t *Transport) Dial(ctx context.Context, addr string) (spi.Session, error) {
	d := net.Dialer{KeepAlive: -1}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("smux: %w", err)
	}
	if t.tls.Enabled {
		cfg, err := t.tls.Client()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("smux: %w", err)
		}
		if c, err = tlsconf.Handshake(ctx, c, cfg, addr); err != nil {
			return nil, fmt.Errorf("smux: %w", err)
		}
	}
	return newSession(c, t.mux, true)
}

// Listener accepts smux sessions, one per TCP connection.
type Listener struct {
	a   *netaccept.Acceptor
	mux *xsmux.Config
}

// Accept blocks until a consumer connects and returns the provider side of
// its session. A temporary failure (out of file descriptors) is retried
// with a backoff from 5 ms to 1 s, as net/http's server does, logged at
// Warn (one line per doubling of the backoff, then one every 10 s) and
// counted (airnode_accept_errors_total); see internal/netaccept. After
// Close it returns an error matching net.ErrClosed.
func (l *Listener) Accept() (spi.Session, error) {
	c, err := l.a.Accept()
	if err != nil {
		return nil, fmt.Errorf("smux: %w", err)
	}
	return newSession(c, l.mux, false)
}

// Addr returns the bound address.
func (l *Listener) Addr() net.Addr { return l.a.Addr() }

// Close stops accepting; sessions already accepted stay up. Idempotent:
// later calls return nil.
func (l *Listener) Close() error { return l.a.Close() }

// Session is one smux session over one TCP connection. Safe for concurrent
// use. It starts no goroutine of its own besides smux's three, which have
// exited shortly after Close returns.
type Session struct {
	mux    *xsmux.Session
	conn   *watchedConn
	client bool        // the consumer's side: Dial's
	first  atomic.Bool // the primary stream has been opened (client) or accepted

	ready     atomic.Bool // mux is set: smux's goroutines may call kill before
	closeOnce sync.Once
	doneOnce  sync.Once
	closing   atomic.Bool   // shutdown has begun
	done      chan struct{} // closed once the session is dead and closed
}

func newSession(c net.Conn, cfg *xsmux.Config, client bool) (*Session, error) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	s := &Session{done: make(chan struct{}), client: client}
	s.conn = newWatchedConn(c, s.kill)
	s.conn.credit.odd = client // smux numbers the client's streams odd
	if !client {
		// keep the consumer's first bytes for a ProtocolError (only the
		// first reads pass through fillFirst)
		s.conn.ra.first = new(openingBytes)
		if s.conn.ra.raw != nil {
			s.conn.ra.attempt = s.conn.ra.fillFirst
		}
	}
	if s.conn.ra.raw != nil {
		s.conn.dm = newDemux(client, cfg.MaxStreamBuffer)
		s.conn.watch.dm = s.conn.dm
	}
	var err error
	if client {
		s.mux, err = xsmux.Client(s.conn, cfg)
	} else {
		s.mux, err = xsmux.Server(s.conn, cfg)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("smux: %w", err)
	}
	s.ready.Store(true)
	if s.conn.failed.Load() { // failed before kill could act
		s.kill()
	}
	return s, nil
}

// shutdown closes the smux session (its streams and the connection) and
// then Done, once; a concurrent caller waits for the first.
func (s *Session) shutdown() {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		_ = s.mux.Close()
		s.markDone()
	})
}

func (s *Session) markDone() { s.doneOnce.Do(func() { close(s.done) }) }

// killGrace is how long a session whose connection failed stays open for
// its streams' readers before kill closes it.
const killGrace = time.Second

// kill ends the session from inside smux's own goroutines (a failed socket
// read or write) or a stream reader that saw a protocol error: smux leaves
// its session open in those cases. Done closes at once; the smux session
// closes when its user closes it, or killGrace later. smux's Close drops
// what its streams hold unread, so closing at once lost the frames the
// peer sent before closing its end — its last responses, its go-away —
// when the socket's end was noticed before the stream's reader got to
// them; the readers see the end after reading them (smux tells its
// streams of the socket's error) and their user closes the session then.
func (s *Session) kill() {
	if s.ready.Load() && !s.closing.Load() {
		s.markDone()
		time.AfterFunc(killGrace, s.shutdown)
	}
}

// Open opens a new stream; the peer gets it from Accept. Safe for
// concurrent use.
func (s *Session) Open() (io.ReadWriteCloser, error) {
	credit := &s.conn.credit
	credit.openMu.Lock() // numbered and registered in order (credit.go)
	defer credit.openMu.Unlock()
	primary := s.client && !s.first.Load()
	if primary {
		// The demux must know the primary stream before the peer's first
		// frame on it can arrive, which may be before OpenStream returns.
		s.conn.win.sid.Store(firstClientStream)
	}
	st, err := s.mux.OpenStream()
	if err != nil {
		return nil, s.failed("open stream", err)
	}
	if primary && st.ID() != firstClientStream {
		st.Close()
		s.kill()
		return nil, fmt.Errorf("smux: open stream: the first stream is %d, not %d: this smux numbers streams differently", st.ID(), firstClientStream)
	}
	return s.wrap(st, s.client, true), nil
}

// Accept blocks until the peer opens a stream or the session dies.
func (s *Session) Accept() (io.ReadWriteCloser, error) {
	st, err := s.mux.AcceptStream()
	if err != nil {
		s.kill() // a broken protocol or a dead socket: the session is over
		if pe := s.protocolError(err); pe != nil {
			return nil, pe
		}
		return nil, s.failed("accept stream", err)
	}
	return s.wrap(st, !s.client, false), nil
}

// firstClientStream is the id smux gives the first stream a client opens
// (its ids start at 1 and go up by 2 before each stream).
const firstClientStream = 3

// wrap returns st as the session's primary stream (direct.go) if it is
// the first stream opened on the consumer's side, or accepted on the
// provider's; else as a stream whose writes count against the session's
// credit (credit.go) if this side opened it, or as a plain smux stream.
func (s *Session) wrap(st *xsmux.Stream, primarySide, opened bool) io.ReadWriteCloser {
	w := &stream{Stream: st, s: s}
	if !primarySide || !s.first.CompareAndSwap(false, true) {
		if opened {
			return openedStream{stream: w, cs: s.conn.credit.opened(st.ID()), wd: &withdrawal{gone: make(chan struct{})}}
		}
		return w
	}
	s.conn.win.sid.Store(st.ID())
	if s.conn.wv.raw != nil {
		return tryPrimaryStream{primaryStream{w}}
	}
	return primaryStream{w}
}

// ProtocolError is the error of a session whose peer broke smux's
// protocol (xsmux.ErrInvalidProtocol: a version or command byte smux does
// not know, or a stream frame of the wrong size: random bytes, an HTTP
// request, a consumer of the tcp transport). Its ProtocolError method
// reports true: the exchange logs such a close at Warn, rate-bounded, and
// counts it in airnode_channels_closed_total{reason="protocol_error"},
// as it does a bad frame on the tcp transport; before, smux's garbage was
// a Debug line and counted nowhere (tester34 F3). On a provider's session
// whose connection did not open as a smux consumer's does, FirstBytes
// gives its first bytes, which the exchange shows to the other transports
// (spi.OpeningRecognizer): a tcp consumer's opening closes as a transport
// mismatch at Info instead. Unwrap gives xsmux.ErrInvalidProtocol.
type ProtocolError struct {
	err   error
	first []byte // the connection's first bytes (8 to 16), when not smux's opening
}

// Error names smux, the violation, what usually sends it and, on a
// provider whose consumer did not open as smux's do, the connection's
// first 8 bytes in hex ("first bytes 0xa17ee00000000000").
func (e *ProtocolError) Error() string {
	if len(e.first) >= frameHeaderLen {
		return fmt.Sprintf("smux: %v (the peer's bytes are not smux frames: a consumer of another transport, or not airnode; first bytes 0x%x)", e.err, e.first[:frameHeaderLen])
	}
	return fmt.Sprintf("smux: %v (the peer's bytes are not smux frames: a consumer of another transport, or not airnode)", e.err)
}

// FirstBytes returns, on a provider's session whose connection did not
// open as a smux consumer's does (RecognizesOpening), the connection's
// first bytes: 8 (a smux frame header, what smux read before it failed)
// to 16 (spi.OpeningRecognizer's length, when they came in one read, as
// a consumer's first frame does); nil on a consumer's session or after a
// smux opening. The caller must not modify them.
func (e *ProtocolError) FirstBytes() []byte { return e.first }

// Unwrap returns smux's error.
func (e *ProtocolError) Unwrap() error { return e.err }

// ProtocolError reports true: the peer broke the protocol.
func (e *ProtocolError) ProtocolError() bool { return true }

// protocolError returns err as a *ProtocolError if it is smux's
// ErrInvalidProtocol and the connection had not failed (a socket that
// failed makes no protocol error), else nil.
func (s *Session) protocolError(err error) error {
	if !errors.Is(err, xsmux.ErrInvalidProtocol) || s.conn.failed.Load() {
		return nil
	}
	pe := &ProtocolError{err: err}
	// The first bytes were written by smux's receiver before it reported
	// the error (which is how err got here): no race.
	if o := s.conn.ra.first; o != nil && o.n >= frameHeaderLen {
		if first := o.b[:o.n]; !(Builder{}).RecognizesOpening(first) {
			pe.first = append([]byte(nil), first...)
		}
	}
	return pe
}

// failed wraps err, naming net.ErrClosed when the session is closed so that
// callers can match it.
func (s *Session) failed(op string, err error) error {
	if s.mux.IsClosed() || s.conn.failed.Load() || errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("smux: %s: %w (%v)", op, net.ErrClosed, err)
	}
	return fmt.Errorf("smux: %s: %w", op, err)
}

// Multiplexed reports true.
func (s *Session) Multiplexed() bool { return true }

// LocalAddr returns the local TCP address.
func (s *Session) LocalAddr() net.Addr { return s.conn.LocalAddr() }

// RemoteAddr returns the peer's TCP address.
func (s *Session) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// PeerCertificate implements spi.PeerCertifier: on the provider under
// mutual TLS, the consumer's certificate verified at the handshake (read
// then, once); nil before the handshake succeeded and without TLS.
func (s *Session) PeerCertificate() *x509.Certificate {
	if p, ok := s.conn.Conn.(spi.PeerCertifier); ok {
		return p.PeerCertificate()
	}
	return nil
}

// Acked implements spi.AckCounter: what the peer has acknowledged of
// the bytes written on the session's connection, and what it has not yet
// (TCP_INFO and SIOCOUTQ, Linux; ok false elsewhere).
func (s *Session) Acked() (acked, unacked uint64, ok bool) { return rawsock.Acked(s.conn.Conn) }

// Close closes the session, its streams and its connection. Idempotent:
// later calls return nil.
func (s *Session) Close() error {
	s.shutdown()
	return nil
}

// Done is closed when the session is dead: closed by either side, the
// connection failed, or the peer broke the protocol.
func (s *Session) Done() <-chan struct{} { return s.done }

// stream is a smux stream whose reader reports a protocol error to its
// session, which smux itself does not close.
type stream struct {
	*xsmux.Stream
	s *Session
}

// Read reads from the stream (smuxread.Read: data the peer sent before
// the session ended comes before the error); a protocol error kills the
// session and is returned as a *ProtocolError.
func (st *stream) Read(b []byte) (int, error) {
	st.s.conn.busyBegin()
	n, err := smuxread.Read(st.Stream, b)
	st.s.conn.busyEnd()
	if err != nil && errors.Is(err, xsmux.ErrInvalidProtocol) {
		st.s.kill()
		if pe := st.s.protocolError(err); pe != nil {
			err = pe
		}
	}
	return n, err
}

// watchedConn reports the first read or write error of a connection to its
// session (smux does not close a session whose socket failed), gives
// smux's writer scatter-gather writes (a frame header and its data in one
// writev, without a 64 KiB copy buffer per session) and its receiver a
// read-ahead buffer held only while it has unread bytes (readAhead).
type watchedConn struct {
	net.Conn
	onFail func()
	failed atomic.Bool
	ra     readAhead
	wv     rawWritev // writev on a plain socket

	// wmu serializes whole frames on the socket: smux's sender's
	// (WriteBuffers) and the primary stream's (direct.go). On it:
	wmu  sync.Mutex
	owed []byte                 // the unwritten tail of a frame TryWrite began: written first
	hdrs [][frameHeaderLen]byte // headers of the primary stream's frames being written
	vec  [][]byte               // their writev vector: header, data, header, ...

	win    sendWindow   // the primary stream's send window (window.go)
	credit streamCredit // for the other streams this side opens (credit.go)
	watch  updWatch     // takes the updates for both from what is read
	dm     *demux       // on a plain socket: the primary stream reads for itself (demux.go)
}

func newWatchedConn(c net.Conn, onFail func()) *watchedConn {
	w := &watchedConn{Conn: c, onFail: onFail}
	w.win.init()
	w.watch.win, w.watch.credit = &w.win, &w.credit
	w.ra.raw = rawsock.Conn(c)
	w.ra.attempt = w.ra.fill
	w.wv.raw = w.ra.raw
	w.wv.attempt = w.wv.write
	return w
}

// Read is smux's receiver's read: on a plain socket through the demux
// (readReceiver, demux.go), under TLS straight from the connection
// (readTLS). Keep this chain shallow: smux's receiver must stay within a
// 2 KiB stack (see WriteBuffers and watchedConn.filled).
func (c *watchedConn) Read(b []byte) (int, error) {
	if c.dm != nil {
		return c.readReceiver(b)
	}
	return c.readTLS(b)
}

// readTLS is Read under TLS, where smux's receiver reads every byte (no
// demux) and updWatch.feed follows them.
//
//go:noinline
func (c *watchedConn) readTLS(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.watch.feed(b[:n])
		if o := c.ra.first; o != nil && o.n < openingLen {
			o.keep(b[:n]) // a provider's first bytes (ProtocolError)
		}
	}
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// Close closes the connection and wakes whoever waits in the demux.
func (c *watchedConn) Close() error {
	err := c.Conn.Close()
	if c.dm != nil {
		c.closed()
	}
	return err
}

func (c *watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// WriteBuffers writes v with one writev; smux's sendLoop uses it when the
// connection has it, passing a frame's header and data. writev consumes v
// (it advances the slice and clears the buffers written), which smux
// allows: it sets both elements before every call. Copying v first, as
// this did before, allocated a 2-element array for every frame, since the
// consumed copy ends with no capacity left (2 allocations per echoed frame
// in BenchmarkStream100B).
//
// Keep this frame small (64 bytes): sendLoop's deepest call chain, through
// here into the writev syscall, must fit in the 2 KiB stack a goroutine
// starts with. It did with a 104-byte frame here and did not with 112:
// every session's sendLoop then grew to 4 KiB, and a parked goroutine's
// stack never shrinks back from 4 KiB unless nearly empty, so each idle
// connection cost 1.7 KiB more (airnode bench --idle 10000; the
// stack-B/session of BenchmarkIdleSession goes from about 6.6 to 8.5 KiB).
//
// On a plain socket it writes through the socket's RawConn with raw
// system calls (rawWritev), as the read-ahead reads.
func (c *watchedConn) WriteBuffers(v [][]byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(c.owed) > 0 {
		if err := c.payOwed(); err != nil {
			return 0, err
		}
	}
	return c.writev(v, true)
}

// writev writes v, consumed as it goes, with one writev(2) where the
// socket takes it all: on a plain socket through its RawConn with raw
// system calls (rawWritev), waiting for room while the send buffer is full
// when wait is true, else returning what it took at once; under TLS
// copied into one buffer first (writeTLS; wait must be true). It returns
// the bytes written; an error kills the session. On wmu.
func (c *watchedConn) writev(v [][]byte, wait bool) (int, error) {
	if c.wv.raw != nil {
		return c.wv.writeBuffers(c, v, wait)
	}
	return c.writeTLS(v)
}

// tlsChunk is the most writeTLS hands the TLS connection at once: four
// full TLS records.
const tlsChunk = 64 << 10

var tlsChunks = sync.Pool{New: func() any { return new([tlsChunk]byte) }}

// writeTLS writes v to the TLS connection in Writes of up to tlsChunk
// bytes, each the concatenation of as much of v as fits: a frame's
// header and its data in one TLS record, where writing the buffers one by
// one (net.Buffers, as smux's sender did) made a record of its own, and a
// write(2), of every 8-byte header. The buffer comes from a pool and goes
// back after the write.
func (c *watchedConn) writeTLS(v [][]byte) (int, error) {
	chunk := tlsChunks.Get().(*[tlsChunk]byte)
	defer tlsChunks.Put(chunk)
	n, k := 0, 0
	flush := func() error {
		m, err := c.Conn.Write(chunk[:k])
		n += m
		k = 0
		if err != nil {
			c.fail(err)
		}
		return err
	}
	for _, b := range v {
		for len(b) > 0 {
			m := copy(chunk[k:], b)
			k += m
			b = b[m:]
			if k == tlsChunk {
				if err := flush(); err != nil {
					return n, err
				}
			}
		}
	}
	if k > 0 {
		if err := flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *watchedConn) fail(err error) {
	if !errors.Is(err, os.ErrDeadlineExceeded) && c.failed.CompareAndSwap(false, true) {
		c.onFail()
	}
}

var (
	_ spi.TransportBuilder = Builder{}
	_ spi.Transport        = (*Transport)(nil)
	_ spi.Listener         = (*Listener)(nil)
	_ spi.Session          = (*Session)(nil)
	_ spi.AckCounter       = (*Session)(nil)
	_ spi.PeerCertifier    = (*Session)(nil)
	_ spi.Withdrawer       = openedStream{}
)

package tcp

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
	"syscall"

	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/internal/rawsock"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this transport.
const Name = "tcp"

// Builder builds tcp transports. The zero value is ready to use.
type Builder struct{}

// Name returns "tcp".
func (Builder) Name() string { return Name }

// Build returns a Transport; it reads only the tls keys (internal/tlsconf),
// and fails when they are inconsistent. It does no I/O and starts no
// goroutine.
func (Builder) Build(u spi.URL) (spi.Transport, error) {
	s, err := tlsconf.Parse(u)
	if err != nil {
		return nil, fmt.Errorf("tcp: %w", err)
	}
	return &Transport{tls: s}, nil
}

// Transport dials and listens for TCP sessions, TLS when tls=true. Safe for
// concurrent use.
type Transport struct {
	tls tlsconf.Settings
	log *slog.Logger // UseLogger's; nil: slog.Default()
}

// UseLogger makes the transport's listeners log to l (spi.LoggerUser): a
// failed accept (out of file descriptors) at Warn, retried with backoff,
// and under tls=true a failed TLS handshake at Warn. Call it before Listen.
func (t *Transport) UseLogger(l *slog.Logger) { t.log = l }

// Listen binds addr ("host:port", port 0 picks a free one).
func (t *Transport) Listen(addr string) (spi.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tcp: %w", err)
	}
	if t.tls.Enabled {
		cfg, err := t.tls.Server()
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("tcp: %w", err)
		}
		l = tlsconf.Listener(l, cfg, 0, t.log, nil)
	}
	a := netaccept.New(l, Name)
	a.UseLogger(t.log)
	return &Listener{a: a}, nil
}

// Dial connects to addr and returns the consumer side of a session. It gives
// up when ctx ends; the error then wraps ctx's error.
func (t *Transport) Dial(ctx context.Context, addr string) (spi.Session, error) {
	d := net.Dialer{KeepAlive: -1}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tcp: %w", err)
	}
	if t.tls.Enabled {
		cfg, err := t.tls.Client()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("tcp: %w", err)
		}
		if c, err = tlsconf.Handshake(ctx, c, cfg, addr); err != nil {
			return nil, fmt.Errorf("tcp: %w", err)
		}
	}
	return newSession(c, false), nil
}

// Listener accepts one session per TCP connection.
type Listener struct {
	a *netaccept.Acceptor
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
		return nil, fmt.Errorf("tcp: %w", err)
	}
	return newSession(c, true), nil
}

// Addr returns the bound address.
func (l *Listener) Addr() net.Addr { return l.a.Addr() }

// Close stops accepting; sessions already accepted stay up. Idempotent:
// later calls return nil.
func (l *Listener) Close() error { return l.a.Close() }

// errClosed is returned by Open and Accept on a dead session.
var errClosed = fmt.Errorf("tcp: session: %w", net.ErrClosed)

// Session is one TCP connection with its single stream. Safe for concurrent
// use; it starts no goroutine.
type Session struct {
	conn     net.Conn
	raw      syscall.RawConn // conn's socket for ReadLazy; nil under TLS
	provider bool
	taken    atomic.Bool // the stream was handed out
	done     chan struct{}
	once     sync.Once
}

func newSession(c net.Conn, provider bool) *Session {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &Session{conn: c, raw: rawsock.Conn(c), provider: provider, done: make(chan struct{})}
}

// Open returns the connection's stream the first time it is called (unless
// Accept took it), then spi.ErrNotMultiplexed. On a dead session it returns an
// error matching net.ErrClosed.
func (s *Session) Open() (io.ReadWriteCloser, error) {
	if s.dead() {
		return nil, errClosed
	}
	if !s.taken.CompareAndSwap(false, true) {
		return nil, spi.ErrNotMultiplexed
	}
	return s.newStream(), nil
}

// newStream returns the session's stream: a spi.TryWriter on a plain
// socket.
func (s *Session) newStream() io.ReadWriteCloser {
	st := &stream{s: s, io: s.conn}
	if s.raw != nil {
		st.io = newRawIO(s)
		return newTryStream(st)
	}
	return st
}

// Accept returns the stream once on the provider side (unless Open took it);
// otherwise it blocks until the session dies and returns an error matching
// net.ErrClosed.
func (s *Session) Accept() (io.ReadWriteCloser, error) {
	if s.provider && !s.dead() && s.taken.CompareAndSwap(false, true) {
		return s.newStream(), nil
	}
	<-s.done
	return nil, errClosed
}

// Multiplexed reports false.
func (s *Session) Multiplexed() bool { return false }

// LocalAddr returns the local TCP address.
func (s *Session) LocalAddr() net.Addr { return s.conn.LocalAddr() }

// RemoteAddr returns the peer's TCP address.
func (s *Session) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// PeerCertificate implements spi.PeerCertifier: on the provider under
// mutual TLS, the consumer's certificate verified at the handshake (read
// then, once); nil before the handshake succeeded and without TLS.
func (s *Session) PeerCertificate() *x509.Certificate {
	if p, ok := s.conn.(spi.PeerCertifier); ok {
		return p.PeerCertificate()
	}
	return nil
}

// Close closes the connection and Done. Idempotent: later calls return nil.
func (s *Session) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.conn.Close()
	})
	return err
}

// Acked implements spi.AckCounter: what the peer has acknowledged of
// the bytes written on the session's connection, and what it has not yet
// (TCP_INFO and SIOCOUTQ, Linux; ok false elsewhere).
func (s *Session) Acked() (acked, unacked uint64, ok bool) { return rawsock.Acked(s.conn) }

// Done is closed when the session is closed or a Read or Write on its
// stream has failed.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) dead() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// fail closes the session after an I/O error other than a deadline.
func (s *Session) fail(err error) {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		_ = s.Close()
	}
}

// stream is the session's connection; its first failure kills the session.
type stream struct {
	s    *Session
	io   io.ReadWriter // the connection: rawIO on a plain socket, the net.Conn under TLS
	lazy *lazyRead     // ReadLazy's state, made by its first call
}

// Read reads from the connection; an error other than a deadline kills the
// session.
func (st *stream) Read(b []byte) (int, error) {
	n, err := st.io.Read(b)
	if err != nil {
		st.s.fail(err)
	}
	return n, err
}

// Write writes to the connection; an error other than a deadline kills the
// session.
func (st *stream) Write(b []byte) (int, error) {
	n, err := st.io.Write(b)
	if err != nil {
		st.s.fail(err)
	}
	return n, err
}

// Close closes the session.
func (st *stream) Close() error { return st.s.Close() }

var (
	_ LazyReader           = (*stream)(nil)
	_ spi.TransportBuilder = Builder{}
	_ spi.Transport        = (*Transport)(nil)
	_ spi.Listener         = (*Listener)(nil)
	_ spi.Session          = (*Session)(nil)
	_ spi.AckCounter       = (*Session)(nil)
	_ spi.PeerCertifier    = (*Session)(nil)
)

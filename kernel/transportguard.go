package kernel

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// A transport's calls the kernel and the exchange make on goroutines no
// caller can recover (a consumer's connection manager, a provider's
// accept loop, a channel's stream loops, a session's close at shutdown)
// go through these guards: a panic becomes an
// *extension.PanicError naming the transport and the call
// (`transport "mytr": Dial panicked: boom`, Method "Dial",
// "Listener.Accept", "Listener.Close", "Session.Open", "Session.Accept"
// or "Session.Close"), logged at Error with its stack, and fails only
// that operation: the connection (a consumer redials after its backoff),
// the accept (the accept loop retries after its backoff), the stream or
// the close. The process lives and other connections go on.

// recoverTransport, deferred, turns a panic in the transport named name's
// method into *err, logged to log at Error with its stack.
func recoverTransport(log *slog.Logger, name, method string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	pe := &extension.PanicError{Point: extension.PointTransport, Name: name, Method: method, Value: v, Stack: debug.Stack()}
	if log == nil {
		log = slog.Default()
	}
	log.Error(pe.Error(), "transport", name, "call", method, "panic", fmt.Sprint(v), "stack", string(pe.Stack))
	*err = pe
}

// guardedDial calls tr.Dial, the transport named name's, recovering a
// panic, and guards the session it returns.
func guardedDial(ctx context.Context, log *slog.Logger, tr spi.Transport, name, addr string) (sess spi.Session, err error) {
	defer recoverTransport(log, name, "Dial", &err)
	sess, err = tr.Dial(ctx, addr)
	if err != nil || sess == nil {
		return sess, err
	}
	return &guardedSession{Session: sess, name: name, log: log}, nil
}

// guardedSession is a transport's session whose Open, Accept and Close
// recover a panic (as an error).
type guardedSession struct {
	spi.Session
	name string // the transport's
	log  *slog.Logger
}

func (s *guardedSession) Open() (st io.ReadWriteCloser, err error) {
	defer recoverTransport(s.log, s.name, "Session.Open", &err)
	return s.Session.Open()
}

func (s *guardedSession) Accept() (st io.ReadWriteCloser, err error) {
	defer recoverTransport(s.log, s.name, "Session.Accept", &err)
	return s.Session.Accept()
}

// NetConn forwards the transport session's NetConn, when it has one: the
// exchange closes that net.Conn when the session's Close failed. nil
// otherwise.
func (s *guardedSession) NetConn() net.Conn {
	if nc, ok := s.Session.(interface{ NetConn() net.Conn }); ok {
		return nc.NetConn()
	}
	return nil
}

// Acked forwards the transport session's spi.AckCounter, ok false when
// it has none: the liveness check forgives a ping queued behind a large
// request the provider keeps acknowledging (hidden by this wrapper,
// every upload over a slow link was still cut).
func (s *guardedSession) Acked() (acked, unacked uint64, ok bool) {
	if a, is := s.Session.(spi.AckCounter); is {
		return a.Acked()
	}
	return 0, 0, false
}

// PeerCertificate forwards the transport session's spi.PeerCertifier
// (the consumer's certificate under mutual TLS), nil when it has none.
// The exchange asks only when a provider call asks spi.PeerCertificate.
func (s *guardedSession) PeerCertificate() *x509.Certificate {
	if p, ok := s.Session.(spi.PeerCertifier); ok {
		return p.PeerCertificate()
	}
	return nil
}

func (s *guardedSession) Close() (err error) {
	defer recoverTransport(s.log, s.name, "Session.Close", &err)
	return s.Session.Close()
}

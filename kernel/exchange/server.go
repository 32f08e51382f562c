package exchange

import (
	"context"
	"net"

	"github.com/airnode/airnode/spi"
)

// Server accepts sessions from a transport listener, one provider Channel
// per session.
type Server struct {
	l    spi.Listener
	opts Options
}

// NewServer returns a server on l; it does not start.
func NewServer(l spi.Listener, opts Options) *Server { return &Server{l: l, opts: opts} }

// Serve runs the accept loop; it returns nil after Shutdown or Close.
func (s *Server) Serve() error { return nil }

// Shutdown stops accepting, waits for in-flight requests until ctx ends,
// then closes every channel.
func (s *Server) Shutdown(ctx context.Context) error { return nil }

// Close closes the listener and every channel at once.
func (s *Server) Close() error { return nil }

// Addr returns the listener's address.
func (s *Server) Addr() net.Addr { return s.l.Addr() }

// InFlight returns the number of requests being served.
func (s *Server) InFlight() int { return 0 }

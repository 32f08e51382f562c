package kernel

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/airnode/airnode/spi"
)

// listen calls tr.Listen(addr) (the transport named name, for service
// key) and wraps the listener so that its Close never blocks the
// exchange's shutdown (listener). spi.Transport.Listen takes no ctx:
// when ctx ends before Listen returns, listen returns a
// *LeftRunningError naming the transport ("kernel: export t.Echo:
// transport \"unix\" Listen on 127.0.0.1:0 did not return within ctx;
// left running") and Listen's goroutine closes the listener it returns
// later, if it ever does (tester19 finding 2).
func (n *Node) listen(ctx context.Context, tr spi.Transport, name, key, addr string) (*listener, error) {
	var got spi.Listener
	var mu sync.Mutex
	abandoned := false
	err := n.within(ctx, "export "+key, fmt.Sprintf("transport %q Listen on %s", name, addr), func() error {
		l, err := tr.Listen(addr)
		if err != nil {
			return fmt.Errorf("kernel: export %s: listen %s: %w", key, addr, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			_ = l.Close()
			return nil
		}
		got = l
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		abandoned = true
		if got != nil { // returned just as within gave up
			_ = got.Close()
		}
		return nil, err
	}
	return &listener{Listener: got, closed: make(chan struct{})}, nil
}

// listener is a transport's listener whose Close runs on a goroutine of
// its own: the exchange closes it first thing in its shutdown, and one
// whose Close never returns would keep every connection open. The
// server's shutdown then waits for the close, and for the accept loop,
// bounded by its ctx (server.awaitListener).
type listener struct {
	spi.Listener
	once   sync.Once
	closed chan struct{} // the transport's Close returned
}

// Close starts the transport listener's Close, once, and returns nil
// without waiting for it (its error is dropped, as the exchange drops it).
func (l *listener) Close() error {
	l.once.Do(func() {
		go func() {
			defer close(l.closed)
			_ = l.Listener.Close()
		}()
	})
	return nil
}

// noPortError says that a listener's address gives no port to publish:
// a provider exported at port 0 could be reached by nobody (tester19
// finding 5). spi.Listener.Addr must be a *net.TCPAddr or an address
// whose String is host:port.
func noPortError(transport string, a net.Addr) error {
	return fmt.Errorf("transport %q: listener address %s has no port; a listener's Addr must give host:port (a *net.TCPAddr or an address whose String is host:port)",
		transport, a)
}

// awaitListener waits for the listener's Close and the accept loop
// (Serve) to return, for ctx's end plus leftGrace at most: a transport
// listener whose Close or Accept never returns is left running, and the
// error, logged at Warn, names the transport ("kernel: shutdown:
// transport \"trap\" listener Close on 127.0.0.1:20880 did not return
// within ctx; left running").
func (s *server) awaitListener(ctx context.Context) error {
	addr := net.JoinHostPort(s.host, fmt.Sprint(s.port))
	if err := within(ctx, s.log, "shutdown", fmt.Sprintf("transport %q listener Close on %s", s.transport, addr), func() error {
		<-s.l.closed
		return nil
	}); err != nil {
		return err
	}
	return within(ctx, s.log, "shutdown", fmt.Sprintf("transport %q listener Accept on %s (after its Close)", s.transport, addr), func() error {
		<-s.done
		return nil
	})
}

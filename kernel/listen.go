package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// listen calls tr.Listen(addr) (the transport named name, for service
// key) and wraps the listener so that its Close never blocks the
// exchange's shutdown (listener). spi.Transport.Listen takes no ctx:
// when ctx ends before Listen returns, listen returns a
// *LeftRunningError naming the transport ("kernel: export t.Echo:
// transport \"unix\" Listen on 127.0.0.1:0 did not return within 1s;
// stopped waiting for it (it may still finish later)") and Listen's goroutine closes the listener it returns
// later, if it ever does.
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
	return &listener{Listener: got, name: name, log: n.logger, closed: make(chan struct{})}, nil
}

// listener is a transport's listener whose Close runs on a goroutine of
// its own: the exchange closes it first thing in its shutdown, and one
// whose Close never returns would keep every connection open. The
// server's shutdown then waits for the close, and for the accept loop,
// bounded by its ctx (server.awaitListener).
//
// Its Accept and Close, and the sessions Accept returns, recover a panic
// as an error (transportguard.go).
type listener struct {
	spi.Listener
	name     string // the transport's
	log      *slog.Logger
	once     sync.Once
	closed   chan struct{} // the transport's Close returned
	closeErr error         // its error (a recovered panic: *extension.PanicError); set before closed is closed
}

// Close starts the transport listener's Close, once, and returns nil
// without waiting for it (its error is kept for awaitListener: closeErr).
func (l *listener) Close() error {
	l.once.Do(func() {
		go func() {
			defer close(l.closed)
			l.closeErr = l.guardedClose()
		}()
	})
	return nil
}

// guardedClose is the transport listener's Close, recovering a panic.
func (l *listener) guardedClose() (err error) {
	defer recoverTransport(l.log, l.name, "Listener.Close", &err)
	return l.Listener.Close()
}

// Accept is the transport listener's Accept, recovering a panic (the
// exchange's accept loop retries after its backoff), and guards the
// session it returns.
func (l *listener) Accept() (sess spi.Session, err error) {
	defer recoverTransport(l.log, l.name, "Listener.Accept", &err)
	sess, err = l.Listener.Accept()
	if err != nil || sess == nil {
		return sess, err
	}
	return &guardedSession{Session: sess, name: l.name, log: l.log}, nil
}

// noPortError says that a listener's address gives no port to publish:
// a provider exported at port 0 could be reached by nobody.
// spi.Listener.Addr must be a *net.TCPAddr or an address
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
// within 1s; stopped waiting for it (it may still finish later)").
//
// A Close that panicked fails the step at once: the accept
// loop is waited for leftGrace at most (the listener is most likely
// still open), and the error wraps the *extension.PanicError ("kernel:
// shutdown: transport \"trap\" listener Close on 127.0.0.1:20880
// failed: transport \"trap\": Listener.Close panicked: boom; its accept
// loop may still be running"). So does a Close that returned an error and
// left the accept loop running.
func (s *server) awaitListener(ctx context.Context) error {
	addr := net.JoinHostPort(s.host, fmt.Sprint(s.port))
	step := fmt.Sprintf("transport %q listener Close on %s", s.transport, addr)
	if err := within(ctx, s.log, "shutdown", step, func() error {
		<-s.l.closed
		return nil
	}); err != nil {
		return err
	}
	if cerr := s.l.closeErr; cerr != nil {
		t := time.NewTimer(leftGrace)
		defer t.Stop()
		left := ""
		select {
		case <-s.done:
		case <-t.C:
			left = "; its accept loop may still be running"
		}
		var pe *extension.PanicError
		if left == "" && !errors.As(cerr, &pe) {
			return nil // an error from a Close that closed: dropped, as the exchange drops it
		}
		err := fmt.Errorf("kernel: shutdown: %s failed: %w%s", step, cerr, left)
		s.log.Warn(logMsg(err), "op", "shutdown", "step", step)
		return err
	}
	return within(ctx, s.log, "shutdown", fmt.Sprintf("transport %q listener Accept on %s (after its Close)", s.transport, addr), func() error {
		<-s.done
		return nil
	})
}

// stuckErrors returns a *LeftRunningError, logged at Warn, for each
// connection the exchange's Shutdown left closing, naming the extension
// call it waits on ("kernel: shutdown: transport \"trap\" session Close
// (the connection from 127.0.0.1:50000 to 127.0.0.1:20880) did not
// return within 1s; stopped waiting for it (it may still finish later)", `heartbeat "pinger" stop (...)`,
// `heartbeat "pinger" Watch (...)`, `transport "trap" session Accept
// (...)`), joined; nil when there is none. A session Close or heartbeat
// stop that failed (returned an error, or panicked: an
// *extension.PanicError, reachable with errors.As) is an error of its
// own saying "failed" and whether the connection closed all the same,
// was given up with its net.Conn closed, or was left open.
//
// dctx is the drain's ctx: when the caller's ctx ended it, each
// *LeftRunningError matches that ctx's error and says so
// (markCallerEnded); waited is how long the server's shutdown waited
// (LeftRunningError.Waited: "did not return within 10.5s" when
// shutdown.timeout ended the drain).
func (s *server) stuckErrors(dctx context.Context, waited time.Duration) error {
	addr := net.JoinHostPort(s.host, fmt.Sprint(s.port))
	var errs []error
	for _, st := range s.srv.StuckCalls() {
		call := st.Call
		if strings.HasPrefix(call, "session ") {
			call = fmt.Sprintf("transport %q %s", s.transport, call)
		}
		step := fmt.Sprintf("%s (the connection from %s to %s)", call, st.Remote, addr)
		if st.Err != nil {
			what := "the connection closed all the same"
			switch {
			case st.Closed:
			case st.ClosedNetConn:
				what = "the connection was given up; its net.Conn was closed"
			default:
				what = "the connection was given up and left open (its session gives no NetConn to close)"
			}
			err := fmt.Errorf("kernel: shutdown: %s failed: %w; %s", step, st.Err, what)
			s.log.Warn(logMsg(err), "op", "shutdown", "step", step)
			errs = append(errs, err)
			continue
		}
		e := &LeftRunningError{Op: "shutdown", Step: step, Waited: waited}
		markCallerEnded(dctx, e)
		s.log.Log(context.Background(), leftLevel(dctx), logMsg(e), "op", e.Op, "step", e.Step)
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

package exchange

import (
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// heartbeatName names hb in logs and close reasons: its Name() when it
// has one (a heartbeat strategy built by a named builder usually does),
// else its Go type ("*mypkg.pinger"). It is plain: a slog attribute
// carries it as is (heartbeat=pinger), a message quotes it with %q
// (`heartbeat "pinger" Watch panicked`).
func heartbeatName(hb spi.Heartbeat) string {
	if n, ok := hb.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return fmt.Sprintf("%T", hb)
}

// watchHeartbeat calls the heartbeat's Watch on c and returns its stop.
// A Watch that panics does not take the process down (it runs on the
// dialing or accepting goroutine, which no caller can recover): the panic
// is logged at Error with its stack and the channel dies with a reason
// naming the heartbeat and the panic ("heartbeat \"pinger\" Watch
// panicked: boom"), so a consumer's connection manager redials as after
// any failed connection and a provider drops that connection.
// It returns nil then.
func (c *Channel) watchHeartbeat(hb spi.Heartbeat) (stop func()) {
	call := fmt.Sprintf("heartbeat %q Watch", heartbeatName(hb))
	c.watching.Store(&call)
	c.waiting(call)
	defer func() {
		c.watching.Store(nil)
		c.waiting("")
	}()
	defer func() {
		if p := recover(); p != nil {
			name := heartbeatName(hb)
			c.log().Error("heartbeat Watch panicked; closing the channel", "heartbeat", name, "panic", p, "stack", string(debug.Stack()))
			c.die(fmt.Sprintf("heartbeat %q Watch panicked: %v", name, p), slog.LevelWarn)
			stop = nil
		}
	}()
	return hb.Watch(c)
}

// startWatch calls the heartbeat's Watch on a channel newChannel made
// with deferWatch, and ends its making. A Server runs it on a goroutine
// of its own, after counting the channel: a Watch that blocks holds
// neither the accept loop nor the server's lock, and a Shutdown that
// gives up on the channel names it (StuckCall `heartbeat "x" Watch`).
func (c *Channel) startWatch() {
	if c.opts.Heartbeat != nil {
		c.hbStop = c.watchHeartbeat(c.opts.Heartbeat)
	}
	c.release()
}

// waiting tells Options.Waiting, when set, the extension call the
// channel's making is about to wait on (call), or that it returned ("").
func (c *Channel) waiting(call string) {
	if c.opts.Waiting != nil {
		c.opts.Waiting(call)
	}
}

// stopHeartbeat calls stop, the heartbeat watch's stop function; a panic
// in it is logged at Error with its stack, naming the heartbeat, does not
// stop the channel from finishing, and is kept as an
// *extension.PanicError (StopErr; a Server's StuckCalls).
// While stop runs, the channel says it waits on it (StuckCall), so a
// Shutdown that gives up on it names it.
func (c *Channel) stopHeartbeat(stop func()) {
	c.setStuck(fmt.Sprintf("heartbeat %q stop", heartbeatName(c.opts.Heartbeat)))
	defer c.setStuck("")
	defer func() {
		if p := recover(); p != nil {
			name := heartbeatName(c.opts.Heartbeat)
			var err error = &extension.PanicError{Point: extension.PointHeartbeat, Name: name, Method: "stop", Value: p, Stack: debug.Stack()}
			c.hbErr.Store(&err)
			c.log().Error("heartbeat stop panicked", "heartbeat", name, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	stop()
}

// StopErr returns the *extension.PanicError of a heartbeat stop that
// panicked once the channel finished (Wait), else nil.
func (c *Channel) StopErr() error {
	if p := c.hbErr.Load(); p != nil {
		return *p
	}
	return nil
}

// CloseErr returns the error the transport session's Close returned when
// the channel died (a recovered panic is an *extension.PanicError), else
// nil. When it is not nil, Close waits for the channel's goroutines at
// most closeGrace (100 ms): the session may have been left open, its
// readers blocked; Wait may then never return.
func (c *Channel) CloseErr() error {
	if p := c.closeErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Finished is closed when the channel has finished: every goroutine has
// exited and OnClose returned (what Wait waits for).
func (c *Channel) Finished() <-chan struct{} { return c.finished }

// CloseFailed is closed once the session's Close returned an error
// (CloseErr); after it, Finished may never be.
func (c *Channel) CloseFailed() <-chan struct{} { return c.closeFailed }

// ClosedNetConn reports whether the session's Close failed and the
// channel closed the session's net.Conn instead (closeNetConn).
func (c *Channel) ClosedNetConn() bool {
	select {
	case <-c.closeFailed:
		return c.closedConn
	default:
		return false
	}
}

// closeNetConn closes the net.Conn under sess when sess gives it (a
// NetConn() net.Conn method, as crypto/tls.Conn has), after its Close
// failed, and reports whether it did: the kernel cannot otherwise reach
// the connection a transport left open.
func closeNetConn(sess spi.Session) bool {
	nc, ok := sess.(interface{ NetConn() net.Conn })
	if !ok {
		return false
	}
	conn := nc.NetConn()
	if conn == nil {
		return false
	}
	_ = conn.Close()
	return true
}

// setStuck records the extension call closing the channel is about to
// wait on (call), or that it returned (""): Server.StuckCalls names it
// when a Shutdown gives up on the channel.
func (c *Channel) setStuck(call string) {
	if call == "" {
		c.stuck.Store(nil)
		return
	}
	c.stuck.Store(&call)
}

// StuckCall is an extension call a provider's connection was still
// waiting on when Server.Shutdown stopped waiting for it (it is left
// running): Call is "session Close" (the transport's) or `heartbeat
// "pinger" stop`; Remote is the consumer's address.
//
// Call is also "session Accept" (a provider's acceptor in the
// session's Accept, which the session's Close did not end) or
// `heartbeat "pinger" Watch`.
//
// Err, when not nil, says the call returned this error instead (a
// recovered panic is an *extension.PanicError): the call failed. Closed
// then says whether the connection closed all the same (its goroutines
// ended); when not, Shutdown gave up on it at once (after closeGrace,
// 100 ms), the transport most likely having left it open, and
// ClosedNetConn says whether the exchange closed the session's net.Conn
// (a session with a NetConn() net.Conn method). A failed call is listed
// whether or not the connection closed.
type StuckCall struct {
	Call          string
	Remote        string
	Err           error
	Closed        bool
	ClosedNetConn bool
}

// StuckCalls returns the extension calls the connections a Shutdown left
// behind were waiting on, one per connection, and the session Closes
// and heartbeat stops that failed (Err), whenever their connection
// closed (at Shutdown, or earlier: its consumer's close), in no order; nil when every
// connection closed cleanly, or was left behind only for a handler that
// ignores its context.
func (s *Server) StuckCalls() []StuckCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stuck
}

// Acked implements spi.AckCounter for the heartbeat strategies: it
// forwards the session's counter (the kernel's guardedSession forwards the
// transport's), ok false when the session has none. A strategy counts the
// peer acknowledging more of a backlog written to it as a sign of life
// (a large frame on a slow link, during which nothing is read and pings
// queue behind it).
func (c *Channel) Acked() (acked, unacked uint64, ok bool) { return c.acked() }

var _ spi.AckCounter = (*Channel)(nil)

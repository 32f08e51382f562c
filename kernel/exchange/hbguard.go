package exchange

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/airnode/airnode/spi"
)

// heartbeatName names hb in logs and close reasons: its Name() when it
// has one (a heartbeat strategy built by a named builder usually does),
// else its Go type ("*mypkg.pinger"). It is plain: a slog attribute
// carries it as is (heartbeat=pinger), a message quotes it with %q
// (`heartbeat "pinger" Watch panicked`; tester20 N3).
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
// any failed connection and a provider drops that connection (tester19
// finding 3). It returns nil then.
func (c *Channel) watchHeartbeat(hb spi.Heartbeat) (stop func()) {
	defer func() {
		if p := recover(); p != nil {
			name := heartbeatName(hb)
			c.log.Error("heartbeat Watch panicked; closing the channel", "heartbeat", name, "panic", p, "stack", string(debug.Stack()))
			c.die(fmt.Sprintf("heartbeat %q Watch panicked: %v", name, p), slog.LevelWarn)
			stop = nil
		}
	}()
	return hb.Watch(c)
}

// stopHeartbeat calls stop, the heartbeat watch's stop function; a panic
// in it is logged at Error with its stack, naming the heartbeat, and
// does not stop the channel from finishing. While stop runs, the channel
// says it waits on it (StuckCall), so a Shutdown that gives up on it
// names it.
func (c *Channel) stopHeartbeat(stop func()) {
	c.setStuck(fmt.Sprintf("heartbeat %q stop", heartbeatName(c.opts.Heartbeat)))
	defer c.setStuck("")
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("heartbeat stop panicked", "heartbeat", heartbeatName(c.opts.Heartbeat), "panic", p, "stack", string(debug.Stack()))
		}
	}()
	stop()
}

// setStuck records the extension call closing the channel is about to
// wait on (call), or that it returned (""): Server.StuckCalls names it
// when a Shutdown gives up on the channel (tester20 N3).
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
// Err, when not nil, says the call returned this error instead (a
// recovered panic, say) and the connection's goroutines still did not
// end: the transport most likely left the connection open.
type StuckCall struct {
	Call   string
	Remote string
	Err    error
}

// StuckCalls returns the extension calls the connections a Shutdown left
// behind were waiting on, one per connection, in no order; nil when
// Shutdown waited for every connection, or left one behind only for a
// handler that ignores its context.
func (s *Server) StuckCalls() []StuckCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stuck
}

package exchange

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/airnode/airnode/spi"
)

// heartbeatName names hb in logs and close reasons: its Name() when it
// has one (a heartbeat strategy built by a named builder usually does),
// else its Go type ("heartbeat *mypkg.pinger").
func heartbeatName(hb spi.Heartbeat) string {
	if n, ok := hb.(interface{ Name() string }); ok && n.Name() != "" {
		return fmt.Sprintf("%q", n.Name())
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
			c.die(fmt.Sprintf("heartbeat %s Watch panicked: %v", name, p), slog.LevelWarn)
			stop = nil
		}
	}()
	return hb.Watch(c)
}

// stopHeartbeat calls stop, the heartbeat watch's stop function; a panic
// in it is logged at Error with its stack, naming the heartbeat, and
// does not stop the channel from finishing.
func (c *Channel) stopHeartbeat(stop func()) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("heartbeat stop panicked", "heartbeat", heartbeatName(c.opts.Heartbeat), "panic", p, "stack", string(debug.Stack()))
		}
	}()
	stop()
}

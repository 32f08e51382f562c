// Package none is the "none" heartbeat strategy: Watch does nothing, so an
// idle channel's liveness rests on the transport alone (EOF, reset). It
// starts no goroutine and no timer.
//
// It keeps the consumer's liveness check after silent call timeouts
// (spi.TimeoutCheck, on by default): that check is about calls, not
// idleness — it sends a ping only when a call has just timed out with
// nothing read from its connection since it was sent, so an idle channel
// never carries one, and without it a black-holed provider would hold
// every call routed to it until the operating system gives up on the
// connection (TCP retransmissions: about 15 minutes on Linux). Its ping
// waits max(1 s, the call's timeout).
//
//	key                        type  default  bounds
//	heartbeat                  string         "none" selects this strategy
//	heartbeat.ping.on.timeout  bool  true     false: no check at all
package none

// Package exchange carries calls over a transport session as airnode frames
// (kernel/protocol, DESIGN §5): request/response correlation by request id,
// per-call timeouts, heartbeat events, payload limits and the provider's
// request dispatch.
//
// A Channel wraps one spi.Session. Small frames are pipelined on one
// long-lived stream, written by a single writer goroutine that coalesces every
// ready frame into one write; on a multiplexed session a frame whose body is
// over 64 KiB gets a stream of its own so it does not hold up small calls.
// A Server accepts sessions and serves each with a provider Channel.
//
// Channel and Server methods are safe for concurrent use. Channel.Close fails
// every pending call with CHANNEL_INACTIVE at once and waits for the
// channel's I/O goroutines; Channel.Wait also waits for running handlers, the
// heartbeat watch and OnClose. Server.Close and Server.Shutdown return after
// every goroutine they own has exited.
package exchange

// Package idle is the "idle" heartbeat strategy, airnode's default:
// Netty's IdleStateHandler design, which Dubbo adopted in
// 2.7.1, plus per-channel failure counting.
//
// Only the consumer pings. After heartbeat.interval with nothing read it
// sends a two-way heartbeat; while the channel stays read-idle it pings
// again every interval (pings never overlap). A ping that fails or gets no
// answer within heartbeat.ping.timeout counts one failure; any frame read
// (a heartbeat answer or an RPC response) resets the count; at
// heartbeat.retries failures the consumer closes the channel and its
// connection manager reconnects. The provider never pings: it answers, and
// closes a channel with nothing read or written for heartbeat.timeout.
//
// A busy link is not a silent one: bytes of a large frame still arriving
// count as reads, and so does the peer acknowledging more of what this
// side wrote (spi.AckCounter, TCP on Linux) while 64 KiB or more waited
// unacknowledged — a large response the provider is writing, a large
// request the consumer is: the provider does not close such a channel,
// and a consumer ping that failed behind its own backlog while the peer
// took in more of it is no failure. While such a backlog waits, a check
// runs every min(limit/4, 1 s) (limit: interval on the consumer, the
// close timeout on the provider) and stamps the peer alive at its
// previous check, so a black-holed or hung peer, which acknowledges
// nothing once its window is full, is closed within the usual bound
// from its last acknowledgement (package acks).
//
// Negotiation: when the provider's channel carries the
// consumer's heartbeat settings (spi.PeerHeartbeat, sent with the
// consumer's first ping), the provider closes after the consumer-derived
// bound instead of heartbeat.timeout: for an idle consumer interval +
// retries × max(interval, ping.timeout) + max(interval, 1 s), for a dual
// one its heartbeat.timeout. The provider's first check runs after
// min(heartbeat.timeout, 1 s) to pick the settings up.
//
//	key                     type      unit  default            bounds
//	heartbeat               string          idle               "idle", or Dubbo's bare interval in ms ("3000")
//	heartbeat.interval      duration  Go/ms 60s                10ms to 24h
//	heartbeat.ping.timeout  duration  Go/ms heartbeat.interval > 0
//	heartbeat.retries       integer         3                  1 to 1000
//	heartbeat.timeout       duration  Go/ms 3×interval + 20s   > heartbeat.interval (provider all-idle close)
//	heartbeat.ping.on.timeout  bool         true               consumer: ping when a call times out with nothing read
//
// The consumer's liveness check after silent timeouts (spi.TimeoutCheck,
// run by the exchange): a call that fails SERVER_TIMEOUT with nothing read
// from its channel since it was sent makes the consumer ping at once,
// waiting max(1 s, the call's timeout) capped by heartbeat.ping.timeout;
// no answer closes the channel. A channel carrying calls is never
// read-idle, so without it a black-holed provider kept its channel for
// interval × (retries + 1): 4 min with the defaults.
//
// Cost per channel: one runtime timer on each side and no goroutine while
// idle; a consumer ping runs in the timer's goroutine. A Heartbeat is safe
// for concurrent use; stop waits for every goroutine and timer of its watch.
package idle

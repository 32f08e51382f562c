// Package dual is the "dual" heartbeat strategy: the
// two-timer bidirectional design Apache Dubbo 2.7.0 shipped
// (HeartbeatTimerTask and ReconnectTimerTask on a HashedWheelTimer).
//
// Both consumer and provider run, per channel, a heartbeat task ticking at
// heartbeat.interval/3 and a reconnect task ticking at heartbeat.timeout/3.
// The heartbeat task sends a two-way heartbeat when nothing was read or
// nothing was written for more than heartbeat.interval; the ping runs in
// its own goroutine bounded by the interval, so the ticker never waits.
// Unlike Dubbo, which pings again at every tick while the peer is silent,
// a watch keeps at most one ping unanswered per channel (counting the
// kernel's first ping of a new connection): a peer that was only paused
// (SIGSTOP, a VM freeze) would otherwise read all the pings queued
// meanwhile at once, which the provider's ping-flood guard takes for a
// flood. The answer to a ping counts as a write at the time it came, so a
// ping answered late is not followed at once by one for write-idleness.
// The reconnect task closes the channel when nothing was read for more
// than heartbeat.timeout: on the consumer the connection manager then
// reconnects, on the provider the channel is gone. Bytes of a large
// frame still arriving count as reads, and so does the peer acknowledging
// more of what this side wrote (spi.AckCounter, TCP on Linux) while
// 64 KiB or more waited unacknowledged (a large request or response on a
// slow link, which pings and their answers queue behind): while such a
// backlog waits the reconnect task checks every min(timeout/4, 1 s) and
// stamps the peer alive at its previous check, so a black hole, which
// acknowledges nothing, is still closed within timeout + a tick of the
// last acknowledgement (package acks). When the provider's
// channel carries the consumer's heartbeat settings (spi.PeerHeartbeat),
// the provider's timeout is the shorter of its own heartbeat.timeout and
// the consumer-derived one (a dual consumer's heartbeat.timeout; for an
// idle consumer its give-up time plus a slack): the provider pings on its
// own interval, so a live consumer answers within its own timeout whatever
// the consumer's settings. Its first reconnect check runs after
// min(heartbeat.timeout/3, 1 s) to pick the settings up.
//
//	key                 type      unit  default        bounds
//	heartbeat           string          idle           "dual" selects this strategy
//	heartbeat.interval  duration  Go/ms 60s            10ms to 24h
//	heartbeat.timeout   duration  Go/ms 3×interval     ≥ 2 × heartbeat.interval
//	heartbeat.ping.on.timeout  bool  true             consumer: ping when a call times out with nothing read
//
// The consumer's liveness check after silent timeouts (spi.TimeoutCheck,
// run by the exchange): a call that fails SERVER_TIMEOUT with nothing read
// from its channel since it was sent makes the consumer ping at once,
// waiting max(1 s, the call's timeout) capped by heartbeat.interval; no
// answer closes the channel, well before heartbeat.timeout of silence.
//
// Cost per channel: two runtime timers on each side and no goroutine while
// idle. A Heartbeat is safe for concurrent use; stop waits for every
// goroutine and timer of its watch.
package dual

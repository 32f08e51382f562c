// Package counters holds airnode's process-wide event counters: heartbeat,
// reconnection, registry and access-control events that layers without a
// metrics dependency (kernel, exchange, heartbeat and registry extensions,
// filters) count with one atomic add, and that package
// extensions/filter/metrics exports to Prometheus.
//
// The counters are package variables because these events belong to the
// process, not to one node or one catalog: two nodes in one process share
// them. Every method is safe for concurrent use, lock-free and
// allocation-free (but for RegistryConnections, a list of live
// connection states read when scraped); nothing here starts a goroutine.
package counters

import "sync/atomic"

// Counter is a monotonically increasing event count. The zero value is 0
// and ready to use.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.n.Add(n) }

// Load returns the current count.
func (c *Counter) Load() uint64 { return c.n.Load() }

// Gauge is a value that goes up and down. The zero value is 0 and ready
// to use.
type Gauge struct{ n atomic.Int64 }

// Add adds n (negative: subtracts).
func (g *Gauge) Add(n int64) { g.n.Add(n) }

// Load returns the current value.
func (g *Gauge) Load() int64 { return g.n.Load() }

// HeartbeatCounters counts heartbeat and reconnection events.
type HeartbeatCounters struct {
	// PingsSent counts two-way heartbeat requests this process sent: the
	// heartbeat strategies' (a consumer's idle or dual, a provider's dual;
	// a provider's idle sends none) and the consumer's liveness check's
	// (exchange, heartbeat.ping.on.timeout); the connection manager's
	// readiness ping is not one of them. Sent ≥ answered + failed: a ping
	// cut short by its channel closing or its watch stopping is neither.
	PingsSent Counter
	// PingsAnswered counts sent pings whose answer arrived in time.
	PingsAnswered Counter
	// PingsFailed counts sent pings that failed or timed out.
	PingsFailed Counter
	// PingsReceived counts two-way heartbeat requests from peers that this
	// process answered (readiness pings included).
	PingsReceived Counter
	// Reconnects counts the consumer's connections re-made: a connection
	// that was up, died (whatever closed it) and came up again counts one
	// when its redial succeeds (and its first ping is answered), however
	// many dials that took. Before tester76 #2 it counted the dials, which
	// ReconnectAttempts counts now.
	Reconnects Counter
	// ReconnectAttempts counts the dials the consumer's connection
	// manager started after a channel died (not first connects): each
	// failed one and the one that succeeded.
	ReconnectAttempts Counter
	// ConnectionsLost counts the consumer's connections that were up and
	// died without the consumer closing them, whatever ended them: the
	// provider (EOF, reset, its shutdown), a heartbeat verdict, the
	// liveness check, a protocol error.
	ConnectionsLost Counter
	// IdleClosed counts channels closed by a heartbeat strategy's verdict:
	// idle or silent for too long, or too many failed pings. The liveness
	// check's closes are LivenessClosed, not these; nor is a consumer
	// channel whose first ping was never answered (spi.Established false):
	// that is a failed connection attempt, TransportCounters.ConnectHeartbeat.
	IdleClosed Counter
	// LivenessClosed counts consumer channels the liveness check closed
	// (kernel/exchange liveness.go, heartbeat.ping.on.timeout): calls
	// timed out with nothing read since they were sent, and a ping got no
	// answer either. Such a channel may carry thousands of calls a second:
	// it is silent, not idle.
	LivenessClosed Counter
}

// RegistryCounters counts service-registry events.
type RegistryCounters struct {
	// Notifications counts provider-list pushes delivered to subscribers.
	Notifications Counter
	// SessionExpiries counts registry sessions that expired (ZooKeeper).
	SessionExpiries Counter
}

// AccessCounters counts calls refused by access control and limits.
type AccessCounters struct {
	// TokenRejections counts calls the token filter refused.
	TokenRejections Counter
	// PluginFilterRejections counts calls a provider-side filter plugin
	// refused before the service ran, with spi.ErrAccessDenied as its
	// error's Cause (the plugin's rejection crosses the plugin boundary
	// with it), as TokenRejections counts the token filter's.
	PluginFilterRejections Counter
	// ExecutesRejections counts calls the executelimit filter refused with
	// SERVER_THREADPOOL_EXHAUSTED.
	ExecutesRejections Counter
	// ThreadsRejections counts calls the threadlimit filter (URL key
	// threads, a cap per provider address) refused with
	// SERVER_THREADPOOL_EXHAUSTED.
	ThreadsRejections Counter
	// WorkersRejections counts requests a provider's worker pool refused
	// unrun with SERVER_THREADPOOL_EXHAUSTED: every worker busy, and the
	// request waited in the pool's queue over a tenth of its timeout, or
	// found the queue's oldest request waiting longer than that.
	WorkersRejections Counter
	// ActivesTimeouts counts calls the activelimit filter gave up on with
	// CLIENT_TIMEOUT.
	ActivesTimeouts Counter
}

// ProviderCounters counts requests a provider answered before they
// reached a service's filter chain, so that no per-method series (which
// the metrics filter keeps) saw them. They are counted by status only: the
// service and method names come from the client, and a series per name
// would let a client grow memory without bound.
type ProviderCounters struct {
	// ServiceNotFound counts SERVICE_NOT_FOUND answers: a service not
	// exported on the server, or a method the service does not have.
	ServiceNotFound Counter
	// BadRequest counts BAD_REQUEST answers: a wrong number of arguments,
	// or an argument the codec could not decode into its parameter.
	BadRequest Counter
}

// DispatchCounters count where dispatcher=adaptive (the default) ran
// provider requests other than on the connection's reader: every request
// it did not run on the reader is one of Quiet, Window or Batch, so the
// share run on the reader is 1 − their sum / requests served. Only the
// worker-pool path counts, so the reader's path costs nothing more.
type DispatchCounters struct {
	// Quiet counts requests of a connection's first read batch after a
	// second without one, sent to the worker pool (a call run on the
	// reader would grow an idle connection's stack).
	Quiet Counter
	// Window counts requests sent to the worker pool because their
	// connection was within its pool window after a hand-off (10 ms,
	// doubling while hand-offs keep coming, up to 1 s).
	Window Counter
	// Batch counts requests sent to the worker pool because their read
	// batch had already run 1 ms on the reader (many requests read
	// together, slow handlers, or the thread paused by the OS).
	Batch Counter
	// HandOffs counts requests that ran 1 ms on the reader, so that the
	// connection's reading moved to a new goroutine.
	HandOffs Counter
}

// OutlierCounters counts consumer-side outlier ejections (kernel
// outlier.go).
type OutlierCounters struct {
	// Ejections counts providers a reference stopped picking because
	// their calls kept failing (outlier.consecutive failures in a row).
	Ejections Counter
}

// Outlier holds the process's outlier-ejection counters.
var Outlier OutlierCounters

// The process-wide counters.
var (
	Heartbeat HeartbeatCounters
	Registry  RegistryCounters
	Access    AccessCounters
	Provider  ProviderCounters
	Dispatch  DispatchCounters
)

// TransportCounters counts transport events of the bundled transports.
type TransportCounters struct {
	// AcceptErrors counts temporary accept failures of provider listeners
	// (out of file descriptors: EMFILE, ENFILE), each retried after a
	// backoff (internal/netaccept).
	AcceptErrors Counter
	// AcceptRefused counts consumer connections a provider closed at once
	// after accepting them, being at its connection limit: the URL keys
	// accepts and accepts.per.ip (kernel/exchange ConnectionLimit).
	AcceptRefused Counter
	// ConnectFDs, ConnectPorts, ConnectBuffers, ConnectProviderLimit and
	// ConnectOther count the consumer's failed connection attempts (a
	// dial, or its first ping) by cause: this process out of file
	// descriptors (EMFILE, ENFILE), the host out of ephemeral ports
	// (EADDRNOTAVAIL), out of socket buffers (ENOBUFS), the provider at
	// its connection limit (accepts, accepts.per.ip: it said so in a
	// close-reason event before closing), or anything else (a reset, a
	// TLS failure, a first ping answered with an error; a dial that timed
	// out or was refused is ConnectTimeout or ConnectRefused, a first ping
	// that got no answer ConnectHeartbeat). Each attempt counts once
	// (kernel conn.go).
	ConnectFDs           Counter
	ConnectPorts         Counter
	ConnectBuffers       Counter
	ConnectProviderLimit Counter
	ConnectOther         Counter
	// ConnectTimeout counts attempts whose dial (or TLS handshake) timed
	// out: no answer at all, what a black-holed path or a host that
	// vanished without a trace gives (connect.timeout, or the system's
	// own SYN retries). ConnectRefused counts dials the provider's host
	// refused (ECONNREFUSED: nothing listens on the port). Neither is in
	// ConnectOther.
	ConnectTimeout Counter
	ConnectRefused Counter
	// ConnectHeartbeat counts attempts whose dial succeeded and whose
	// first ping (a heartbeat, carrying the hello) got no answer: nothing
	// answered it within connect.timeout, or this consumer's heartbeat
	// closed the connection while it waited. A hung or paused provider
	// gives it, as a later unanswered ping gives a heartbeat verdict
	// (HeartbeatCounters.IdleClosed). Not in ConnectOther (until fix-ab
	// it was).
	ConnectHeartbeat Counter
}

// Transport holds the process's transport counters.
var Transport TransportCounters

// ChannelCounters count what the exchange's guards do to connections
// (kernel/exchange): closes by reason class, and the provider's
// backpressure stops. A close is counted once, under the first reason
// that ended the channel; a heartbeat strategy's verdict is counted in
// HeartbeatCounters.IdleClosed, and the liveness check's in
// HeartbeatCounters.LivenessClosed, not here. They are how an operator sizes
// an attack whose log lines are rate-bounded.
type ChannelCounters struct {
	// ProtocolErrors counts channels closed because the peer broke the
	// framing: a bad magic, a header claiming too large a body, a frame
	// cut short by the peer, an event this side cannot take.
	ProtocolErrors Counter
	// TooManyPings counts provider channels the ping-flood guard closed
	// (Options.MinPingInterval, "too many pings").
	TooManyPings Counter
	// FirstFrameTimeouts counts provider channels closed because no
	// complete frame arrived within Options.FirstFrameTimeout (default
	// 10 s) of connecting: silent or stalled peers.
	FirstFrameTimeouts Counter
	// Stalls counts the times a provider channel's readers stopped
	// because highWater (8 MiB) of answers were unsent to a consumer that
	// does not read them or sits behind a slow path (the sum of every
	// ChannelStats.Stalls). A stall
	// stops reading; it does not close the channel.
	Stalls Counter
	// UnsentLimitStalls counts the stalls (counted in Stalls too) that
	// began under a provider's Server-wide bound (URL key unsent.limit):
	// the provider's consumers together held the limit unread, and this
	// one 256 KiB or more.
	UnsentLimitStalls Counter
	// SlowConsumerCloses counts provider channels closed as slow
	// consumers: they held 64 KiB or more of answers unsent, none of
	// which was written for 5 s, while the provider's consumers together
	// held its unsent.limit (kernel/exchange slowconsumer.go).
	SlowConsumerCloses Counter
	// UnsentHeld is the bytes of answers the providers of this process
	// hold unsent beyond the first 64 KiB of each connection: what their
	// unsent.limit bounds (0 with unsent.limit=0).
	UnsentHeld Gauge
	// UnsentMaking is the bytes the providers' answers of 64 KiB or more
	// (or of a size not yet known) being made count against unsent.limit:
	// three times the expected answer each.
	UnsentMaking Gauge
	// Unsolicited counts answers a consumer received for request ids it
	// never sent (0, or above the highest it numbered), dropped (the sum
	// of every ChannelStats.Unsolicited).
	Unsolicited Counter
	// LateAnswers counts answers a consumer received for no call waiting:
	// their call had timed out, been cancelled or withdrawn (and the
	// unsolicited ones above), dropped (the sum of every
	// ChannelStats.LateResponses).
	LateAnswers Counter
}

// Channels holds the process's channel-guard counters.
var Channels ChannelCounters

// TLSCounters count the TLS handshakes a provider's listener
// (internal/tlsconf) failed and closed the connection on, by cause; one
// connection counts once. Their log lines are rate-bounded; these are
// not. A handshake this side cut short (a connection limit, shutdown) is
// not counted.
type TLSCounters struct {
	// ClientNames counts consumers whose certificate, signed by the
	// provider's tls.ca, holds no name its tls.client.names allows.
	ClientNames Counter
	// Certificate counts consumer certificates that failed verification:
	// signed by a CA outside tls.ca, expired, not for client
	// authentication.
	Certificate Counter
	// NoCertificate counts consumers that sent no certificate under
	// mutual TLS.
	NoCertificate Counter
	// HungUp counts consumers that closed the connection during the
	// handshake (under mutual TLS a Go consumer without a certificate the
	// provider's CA signed does; a port check does too).
	HungUp Counter
	// Other counts every other failure: not a TLS client, a consumer
	// rejecting the provider's certificate, a handshake timeout.
	Other Counter
}

// TLS holds the process's TLS handshake counters.
var TLS TLSCounters

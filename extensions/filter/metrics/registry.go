package metrics

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// MaxSeries bounds the number of (side, service, method) series one
// Registry keeps (about 25 KB each, so at most about 25 MB); calls of
// further methods are recorded under OtherMethod.
const MaxSeries = 1000

// OtherMethod is the method label of calls beyond MaxSeries.
const OtherMethod = "_other"

// LatencyBuckets are the upper bounds, in seconds, of the Prometheus
// latency histogram: 100 µs doubling up to 6.5536 s (17 buckets), fine
// enough for loopback calls and wide enough for the default 1 s timeout.
var LatencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 17)

// Histogram range for p99: 1 µs to 10 min, 2 significant digits (1%
// precision, about 20 KB per series).
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 2
)

// Registry holds one node's call metrics and the process-wide counters. It
// owns a *prometheus.Registry of its own, so that nodes and tests in one
// process do not collide. Create it with NewRegistry; safe for concurrent
// use.
type Registry struct {
	prom     *prometheus.Registry
	failures *prometheus.CounterVec
	bounds   []float64 // LatencyBuckets as of NewRegistry
	now      func() time.Time
	clock    bool // WithClock given: end reads now instead of deriving the time

	series sync.Map // seriesKey -> *series
	mu     sync.Mutex
	count  atomic.Int64 // number of series

	providers  sources[spi.ProviderStats] // the consumer's providers, read when scraped (providers.go)
	references sources[string]            // the consumer's references' service keys (providers.go)
	weigher    *warmup.Weigher            // the balancers' weights of the providers, when read (providers.go)
	buildInfo  sync.Once                  // SetBuildInfo
}

// seriesKey identifies one series.
type seriesKey struct {
	side            spi.Side
	service, method string
}

// series is one method's metrics on one side. Everything a call records
// is updated under mu in one short section: the Prometheus families
// airnode_calls_total, airnode_calls_in_flight and
// airnode_call_duration_seconds are produced from these fields when
// scraped (callCollector), not kept in client_golang's own counters,
// gauge and histogram, whose five atomic updates per call cost more than
// the section they replace (issue 9; BenchmarkFilter).
type series struct {
	key     seriesKey
	reg     *Registry
	created time.Time // the counter's and histogram's created timestamp
	active  atomic.Int64

	mu       sync.Mutex
	hist     *hdrhistogram.Histogram // microseconds
	count    int64
	failed   int64 // not cancelled
	canceled int64 // failed while the call's context was cancelled (Cancelled)
	late     int64 // provider: succeeded after the consumer's deadline, counted SERVER_TIMEOUT (MethodStats.Late)
	sum      time.Duration
	first    time.Duration               // end of the first call, since clockBase
	last     time.Duration               // end of the latest call, since clockBase
	began    time.Duration               // start of the first call, since clockBase (LifetimeTPS)
	recent   [rateSeconds + 1]rateBucket // calls completed per second, the last rateSeconds+1 seconds (RecentTPS)
	byStatus map[spi.Status]int64
	failures map[spi.Status]prometheus.Counter // this series' airnode_call_failures_total by status
	seconds  float64                           // sum of latencies in seconds, as a Prometheus histogram adds them
	buckets  []uint64                          // calls per latency bucket: buckets[i] counts bounds[i-1] < s <= bounds[i]
	longest  time.Duration                     // the longest call, exact (MaxMillis; hist has whole microseconds)
}

// RateWindow is the window of MethodStats.RecentTPS: calls per second over
// the last 10 seconds, as Prometheus' rate(airnode_calls_total[10s]) or
// Dubbo's monitor read throughput (over a recent interval, not since the
// start), so that an idle minute or one late call does not hide what the
// method does now.
const RateWindow = rateSeconds * time.Second

// rateSeconds is RateWindow in seconds; a series keeps one more per-second
// bucket, the one the window starts in.
const rateSeconds = 10

// rateBucket counts the calls completed in one second (sec: seconds since
// clockBase, floored), and those of them that failed (not cancelled).
type rateBucket struct {
	sec    int64
	n      int64
	failed int64
}

// secondOf returns d in whole seconds, floored (d is negative under a
// WithClock clock set before the process started).
func secondOf(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d < 0 && d%time.Second != 0 {
		s--
	}
	return s
}

// Option configures a Registry (behaviour only).
type Option func(*Registry)

// WithClock sets the clock used for throughput (default time.Now): when
// calls end and, for RecentTPS and LifetimeTPS, the time a row is read.
func WithClock(now func() time.Time) Option {
	return func(r *Registry) { r.now, r.clock = now, true }
}

// NewRegistry returns an empty registry with the call metrics, the
// process-wide counters of internal/counters, and the Go runtime and
// process collectors registered (the process collector without
// process_network_receive_bytes_total and _transmit_: on Linux they are
// the network namespace's bytes, not the process's; processCollector).
// Exported series:
//
//	airnode_calls_total{side,service,method}                 counter
//	airnode_call_failures_total{side,service,method,status}  counter: cancelled calls excluded
//	airnode_calls_cancelled_total{side,service,method}       counter: calls failed while cancelled (Cancelled)
//	airnode_calls_in_flight{side,service,method}             gauge
//	airnode_call_duration_seconds{side,service,method}       histogram (LatencyBuckets)
//	airnode_heartbeat_pings_{sent,answered,failed,received}_total,
//	airnode_reconnects_total (connections re-made), airnode_reconnect_attempts_total (their dials),
//	airnode_consumer_connections_lost_total, airnode_channels_idle_closed_total,
//	airnode_registry_notifications_total,
//	airnode_registry_session_expiries_total, airnode_token_rejections_total,
//	airnode_plugin_filter_rejections_total,
//	airnode_executes_rejections_total, airnode_threads_rejections_total,
//	airnode_workers_rejections_total, airnode_actives_timeouts_total,
//	airnode_accept_errors_total, airnode_accept_refused_total
//	airnode_tls_handshake_failures_total{reason}             counter: client_names, certificate, no_certificate, hung_up, other
//	airnode_provider_rejected_total{status}                  counter: SERVICE_NOT_FOUND, BAD_REQUEST
//	airnode_provider_pooled_total{reason}                    counter: quiet, window, batch (dispatcher=adaptive)
//	airnode_provider_handoffs_total                          counter (dispatcher=adaptive)
//	airnode_outlier_ejections_total                          counter: providers ejected by consumers (outlier.consecutive)
//	airnode_consumer_provider_calls_total{service,provider}    counter: per provider call, read from the kernel when scraped (AddProviders)
//	airnode_consumer_provider_failures_total{service,provider,status} counter: no sample before the provider's first failure
//	airnode_consumer_provider_in_flight{service,provider}      gauge
//	airnode_consumer_provider_mean_response_seconds{service,provider} gauge: successful calls, last 30 s
//	airnode_consumer_provider_available{service,provider}      gauge: 1 or 0
//	airnode_consumer_provider_ejected{service,provider}        gauge: 1 or 0 (outlier detection)
//	airnode_consumer_provider_weight{service,provider}         gauge: the balancers' effective weight now (warm-up applied; 0 at weight 0)
//	airnode_consumer_provider_warmup_remaining_seconds{service,provider} gauge: 0 once warm
//	airnode_consumer_providers{service,state}                 gauge: providers of each reference by state (available, unavailable, weight0, ejected); 0, not absent, when none (AddReferences)
//	airnode_build_info{version,revision,go_version}           gauge: 1, once SetBuildInfo was called
//	airnode_registry_connected{registry}                      gauge: 1 while the ZooKeeper registry has a session, else 0 (registryConnectedCollector)
//	airnode_consumer_retries_total{service,outcome}           counter: failover retries, outcome made or budget_refused; no sample before a reference's first retry (retriesCollector)
//	airnode_provider_connections{transport}                   gauge: consumer connections the process's providers serve now (connectionsCollector)
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{
		prom:   prometheus.NewRegistry(),
		now:    time.Now,
		bounds: slices.Clone(LatencyBuckets),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "airnode_call_failures_total", Help: "Failed calls, by side, service key, method and status name.",
		}, append(slices.Clone(seriesLabels), "status")),
	}
	for _, o := range opts {
		o(r)
	}
	// silent: the balancers' own Weigher logs a malformed or skewed entry
	r.weigher = warmup.New(warmup.WithClock(r.now), warmup.WithLogger(slog.New(slog.DiscardHandler)))
	r.prom.MustRegister(callCollector{r}, providerCollector{r}, registryConnectedCollector{}, retriesCollector{}, connectionsCollector{}, r.failures,
		collectors.NewGoCollector(), newProcessCollector())
	for _, c := range processCounters() {
		r.prom.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help, ConstLabels: c.labels},
			func() float64 { return float64(c.c.Load()) }))
	}
	for _, g := range processGauges() {
		r.prom.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help},
			func() float64 { return float64(g.g.Load()) }))
	}
	return r
}

// processGauge names one gauge of internal/counters.
type processGauge struct {
	name, key, help string
	g               *counters.Gauge
}

func processGauges() []processGauge {
	ch := &counters.Channels
	return []processGauge{
		{"airnode_unsent_bytes", "channels.unsent_bytes", "Bytes of answers this process's providers hold unsent (queued or being written), beyond the first 64 KiB of each connection: the sum unsent.limit bounds, per listening address (0 with unsent.limit=0).", &ch.UnsentHeld},
		{"airnode_unsent_making_bytes", "channels.unsent_making_bytes", "What the answers of 64 KiB or more (or of a size not yet known) being made count against unsent.limit: three times the expected answer each.", &ch.UnsentMaking},
	}
}

// processCounter names one counter of internal/counters.
type processCounter struct {
	name, key, help string
	c               *counters.Counter
	labels          prometheus.Labels // constant labels: one family, several counters
}

// rejectedHelp is the help of airnode_provider_rejected_total, the same
// for each of its status labels.
const rejectedHelp = "Provider requests answered before any service's filter chain (so in no per-method series), by status: unknown service or method, wrong argument count or undecodable argument."

// pooledHelp is the help of airnode_provider_pooled_total, the same for
// each of its reason labels.
const pooledHelp = "dispatcher=adaptive: provider requests sent to the worker pool instead of run on their connection's reader, by reason: quiet (first batch after 1 s without one), window (after a hand-off, 10 ms to 1 s), batch (their read batch had run 1 ms)."

// closedHelp is the help of airnode_channels_closed_total, the same for
// each of its reason labels.
const closedHelp = "Connections this process closed because of what the peer did, by reason: protocol_error (bad magic, a body over max(4 x payload, 64 MiB), a frame cut short by the peer), too_many_pings (the provider's ping-flood guard), first_frame_timeout (no complete frame within 10 s of connecting), heartbeat (a heartbeat strategy's verdict, idle or silent too long or pings failed: the same count as airnode_channels_idle_closed_total), liveness (the consumer's liveness check, heartbeat.ping.on.timeout: calls timed out with nothing read since, and a ping got no answer; a silent channel, busy or not). Their log lines are rate-bounded; these are not."

// connectHelp is the help of airnode_consumer_connect_failures_total, the
// same for each of its reason labels.
const connectHelp = "Consumer connection attempts (a dial and its first ping) that failed, by reason: fds (this process is out of file descriptors: EMFILE, ENFILE; see ulimit -n), ports (out of ephemeral ports: EADDRNOTAVAIL), buffers (ENOBUFS), provider_limit (the provider refused the connection at its connection limit, URL keys accepts and accepts.per.ip, and said so before closing; it counts it in airnode_accept_refused_total), timeout (the dial or TLS handshake timed out: no answer at all, a black-holed path or a vanished host), refused (the provider's host refused the connection: nothing listens on the port), heartbeat (connected, but the connection's first ping got no answer within connect.timeout: a hung or paused provider, as a later unanswered ping is a heartbeat verdict, airnode_channels_closed_total{reason=\"heartbeat\"}), other (a reset, a TLS failure, a first ping answered with an error)."

// tlsHelp is the help of airnode_tls_handshake_failures_total, the same
// for each of its reason labels.
const tlsHelp = "TLS handshakes a provider failed and closed the connection on, by reason: client_names (a certificate holding no name tls.client.names allows), certificate (signed by a CA outside tls.ca, expired, not for client authentication), no_certificate (none sent under mutual TLS), hung_up (the consumer closed the connection: under mutual TLS a Go consumer without a certificate the CA signed does, a port check too), other (not a TLS client, a consumer rejecting the provider's certificate, a timeout). Their log lines are rate-bounded; these are not."

// tlsFailureKeys are the Counters keys of airnode_tls_handshake_failures_total,
// summed by WriteRejected.
var tlsFailureKeys = []string{"tls.handshake_failures_client_names", "tls.handshake_failures_certificate",
	"tls.handshake_failures_no_certificate", "tls.handshake_failures_hung_up", "tls.handshake_failures_other"}

// rejectedKeys are the Counters keys of the provider requests rejected
// before any service's filter chain, with their status names, in the order
// WriteRejected prints them.
var rejectedKeys = [][2]string{
	{"provider.service_not_found", spi.StatusServiceNotFound.String()},
	{"provider.bad_request", spi.StatusBadRequest.String()},
	{"access.token_rejections", "wrong or missing token"},
	{"access.plugin_filter_rejections", "denied by a filter plugin"},
}

func processCounters() []processCounter {
	h, g, a, p, d, ch := &counters.Heartbeat, &counters.Registry, &counters.Access, &counters.Provider, &counters.Dispatch, &counters.Channels
	return []processCounter{
		{"airnode_heartbeat_pings_sent_total", "heartbeat.pings_sent", "Heartbeat requests this process sent: a consumer's heartbeat pings and liveness-check pings (heartbeat.ping.on.timeout), and a provider's with heartbeat=dual (with the default heartbeat=idle a provider sends none).", &h.PingsSent, nil},
		{"airnode_heartbeat_pings_answered_total", "heartbeat.pings_answered", "Heartbeat requests this process sent that the peer answered in time (0 on a provider unless it uses heartbeat=dual: the pings it answers are airnode_heartbeat_pings_received_total).", &h.PingsAnswered, nil},
		{"airnode_heartbeat_pings_failed_total", "heartbeat.pings_failed", "Heartbeat requests failed or timed out.", &h.PingsFailed, nil},
		{"airnode_heartbeat_pings_received_total", "heartbeat.pings_received", "Heartbeat requests from peers that this process answered (those the ping-flood guard refused are in airnode_channels_closed_total{reason=\"too_many_pings\"}).", &h.PingsReceived, nil},
		{"airnode_reconnects_total", "heartbeat.reconnects", "Consumer connections re-made: a connection that was up, was lost (airnode_consumer_connections_lost_total) and came up again, one however many dials it took (those are airnode_reconnect_attempts_total). Earlier builds counted the dials here.", &h.Reconnects, nil},
		{"airnode_reconnect_attempts_total", "heartbeat.reconnect_attempts", "Dials a consumer started to re-make a lost connection, failed ones and the one that succeeded (first connections excluded).", &h.ReconnectAttempts, nil},
		{"airnode_consumer_connections_lost_total", "heartbeat.connections_lost", "Consumer connections that were up and died without the consumer closing them, whatever ended them: the provider (EOF, reset, its shutdown), a heartbeat verdict, the liveness check, a protocol error.", &h.ConnectionsLost, nil},
		{"airnode_channels_idle_closed_total", "heartbeat.idle_closed", "Channels closed by the heartbeat strategy for idleness or silence (idle or silent past heartbeat.timeout, heartbeat.retries pings failed); not a connection whose first ping was never answered (a failed attempt: airnode_consumer_connect_failures_total{reason=\"heartbeat\"}), nor the liveness check's closes, which are airnode_channels_closed_total{reason=\"liveness\"}.", &h.IdleClosed, nil},
		{"airnode_accept_errors_total", "transport.accept_errors", "Provider listeners' temporary accept failures (out of file descriptors), each retried after a backoff of 5 ms to 1 s.", &counters.Transport.AcceptErrors, nil},
		{"airnode_accept_refused_total", "transport.accept_refused", "Consumer connections a provider closed at once after accepting them, being at its connection limit (URL keys accepts, accepts.per.ip).", &counters.Transport.AcceptRefused, nil},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_fds", connectHelp, &counters.Transport.ConnectFDs, prometheus.Labels{"reason": "fds"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_ports", connectHelp, &counters.Transport.ConnectPorts, prometheus.Labels{"reason": "ports"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_buffers", connectHelp, &counters.Transport.ConnectBuffers, prometheus.Labels{"reason": "buffers"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_provider_limit", connectHelp, &counters.Transport.ConnectProviderLimit, prometheus.Labels{"reason": "provider_limit"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_timeout", connectHelp, &counters.Transport.ConnectTimeout, prometheus.Labels{"reason": "timeout"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_refused", connectHelp, &counters.Transport.ConnectRefused, prometheus.Labels{"reason": "refused"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_heartbeat", connectHelp, &counters.Transport.ConnectHeartbeat, prometheus.Labels{"reason": "heartbeat"}},
		{"airnode_consumer_connect_failures_total", "transport.connect_failures_other", connectHelp, &counters.Transport.ConnectOther, prometheus.Labels{"reason": "other"}},
		{"airnode_registry_notifications_total", "registry.notifications", "Provider-list pushes delivered to subscribers.", &g.Notifications, nil},
		{"airnode_registry_session_expiries_total", "registry.session_expiries", "Registry sessions expired.", &g.SessionExpiries, nil},
		{"airnode_token_rejections_total", "access.token_rejections", "Calls refused by the token filter.", &a.TokenRejections, nil},
		{"airnode_plugin_filter_rejections_total", "access.plugin_filter_rejections", "Calls a provider-side filter plugin refused before the service ran, its error's Cause being spi.ErrAccessDenied.", &a.PluginFilterRejections, nil},
		{"airnode_executes_rejections_total", "access.executes_rejections", "Calls refused by executelimit (URL key executes: calls of one method running at once; SERVER_THREADPOOL_EXHAUSTED).", &a.ExecutesRejections, nil},
		{"airnode_threads_rejections_total", "access.threads_rejections", "Calls refused by threadlimit (URL key threads: calls running at once on one provider address; SERVER_THREADPOOL_EXHAUSTED).", &a.ThreadsRejections, nil},
		{"airnode_workers_rejections_total", "access.workers_rejections", "Requests a provider's worker pool refused unrun (SERVER_THREADPOOL_EXHAUSTED): every worker busy and the request waited, or would wait, over a tenth of its timeout.", &a.WorkersRejections, nil},
		{"airnode_actives_timeouts_total", "access.actives_timeouts", "Calls that waited too long in activelimit (CLIENT_TIMEOUT).", &a.ActivesTimeouts, nil},
		{"airnode_provider_rejected_total", "provider.service_not_found", rejectedHelp, &p.ServiceNotFound, prometheus.Labels{"status": spi.StatusServiceNotFound.String()}},
		{"airnode_provider_rejected_total", "provider.bad_request", rejectedHelp, &p.BadRequest, prometheus.Labels{"status": spi.StatusBadRequest.String()}},
		{"airnode_provider_pooled_total", "dispatch.pooled_quiet", pooledHelp, &d.Quiet, prometheus.Labels{"reason": "quiet"}},
		{"airnode_provider_pooled_total", "dispatch.pooled_window", pooledHelp, &d.Window, prometheus.Labels{"reason": "window"}},
		{"airnode_provider_pooled_total", "dispatch.pooled_batch", pooledHelp, &d.Batch, prometheus.Labels{"reason": "batch"}},
		{"airnode_provider_handoffs_total", "dispatch.handoffs", "dispatcher=adaptive: requests that ran 1 ms on their connection's reader, which then moved to a new goroutine.", &d.HandOffs, nil},
		{"airnode_channels_closed_total", "channels.closed_protocol_error", closedHelp, &ch.ProtocolErrors, prometheus.Labels{"reason": "protocol_error"}},
		{"airnode_channels_closed_total", "channels.closed_too_many_pings", closedHelp, &ch.TooManyPings, prometheus.Labels{"reason": "too_many_pings"}},
		{"airnode_channels_closed_total", "channels.closed_first_frame_timeout", closedHelp, &ch.FirstFrameTimeouts, prometheus.Labels{"reason": "first_frame_timeout"}},
		{"airnode_channels_closed_total", "channels.closed_heartbeat", closedHelp, &h.IdleClosed, prometheus.Labels{"reason": "heartbeat"}},
		{"airnode_channels_closed_total", "channels.closed_liveness", closedHelp, &h.LivenessClosed, prometheus.Labels{"reason": "liveness"}},
		{"airnode_backpressure_stalls_total", "channels.stalls", "Times a provider stopped reading a connection because 8 MiB of answers were unsent to a consumer that does not read them or sits behind a slow path (reading again under 4 MiB; the connection stays open), or 256 KiB while all its consumers together held unsent.limit (default 256 MiB; reading again under 64 KiB).", &ch.Stalls, nil},
		{"airnode_unsent_limit_stalls_total", "channels.unsent_limit_stalls", "Of airnode_backpressure_stalls_total, the stalls that began because the provider's consumers together held unsent.limit (default 256 MiB) of answers unread.", &ch.UnsentLimitStalls, nil},
		{"airnode_slow_consumer_closes_total", "channels.slow_consumer_closes", "Connections a provider closed as slow consumers: 64 KiB or more of answers unsent with none written for 5 s while its consumers together held unsent.limit (default 256 MiB). Each close is logged at WARN (rate-bounded), \"slow consumer\".", &ch.SlowConsumerCloses, nil},
		{"airnode_late_answers_total", "channels.late_answers", "Answers a consumer received after their call had timed out, been cancelled or withdrawn (no call waited for them; unsolicited ones included), dropped.", &ch.LateAnswers, nil},
		{"airnode_unsolicited_answers_total", "channels.unsolicited_answers", "Answers received for request ids this process never sent (0, or above the highest it numbered), dropped: the peer's framing or id handling is broken.", &ch.Unsolicited, nil},
		{"airnode_directory_empty_protections_total", "directory.empty_protections", "Times a consumer's reference kept its connected providers although a registry notification listed none (empty protection, URL key registry.empty.protection); one per episode, the log's Warn names the service and how many were kept.", &counters.Directory.EmptyProtections, nil},
		{"airnode_directory_damped_removals_total", "directory.damped_removals", "Times a registry notification dropped more than registry.removal.damping percent of a reference's connected providers at once and their removal waited registry.removal.grace; one per episode.", &counters.Directory.DampedRemovals, nil},
		{"airnode_tls_handshake_failures_total", "tls.handshake_failures_client_names", tlsHelp, &counters.TLS.ClientNames, prometheus.Labels{"reason": "client_names"}},
		{"airnode_tls_handshake_failures_total", "tls.handshake_failures_certificate", tlsHelp, &counters.TLS.Certificate, prometheus.Labels{"reason": "certificate"}},
		{"airnode_tls_handshake_failures_total", "tls.handshake_failures_no_certificate", tlsHelp, &counters.TLS.NoCertificate, prometheus.Labels{"reason": "no_certificate"}},
		{"airnode_tls_handshake_failures_total", "tls.handshake_failures_hung_up", tlsHelp, &counters.TLS.HungUp, prometheus.Labels{"reason": "hung_up"}},
		{"airnode_tls_handshake_failures_total", "tls.handshake_failures_other", tlsHelp, &counters.TLS.Other, prometheus.Labels{"reason": "other"}},
		{"airnode_outlier_ejections_total", "outlier.ejections", "Providers a consumer's reference stopped picking for a while because their calls kept failing (outlier.consecutive in a row: SERVER_TIMEOUT, CHANNEL_INACTIVE, SERVER_ERROR).", &counters.Outlier.Ejections, nil},
	}
}

// since returns the time now, as time since clockBase, by the registry's
// clock.
func (r *Registry) since() time.Duration {
	if r.clock {
		return r.now().Sub(clockBase)
	}
	return time.Since(clockBase)
}

// Prometheus returns the registry's own *prometheus.Registry, to register
// further collectors or to gather from.
func (r *Registry) Prometheus() *prometheus.Registry { return r.prom }

// seriesFor returns the series of one side, service and method, creating it
// on first use (at most MaxSeries; later ones fold into OtherMethod).
func (r *Registry) seriesFor(side spi.Side, service, method string) *series {
	k := seriesKey{side, service, method}
	if s, ok := r.series.Load(k); ok {
		return s.(*series)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.series.Load(k); ok {
		return s.(*series)
	}
	if r.count.Load() >= MaxSeries {
		k.method = OtherMethod
		if s, ok := r.series.Load(k); ok {
			return s.(*series)
		}
	}
	s := &series{
		key:     k,
		reg:     r,
		created: time.Now(),
		hist:    hdrhistogram.New(histMin, histMax, histSigFigs),
		buckets: make([]uint64, len(r.bounds)),
	}
	r.series.Store(k, s)
	r.count.Add(1)
	return s
}

// begin records the start of a call.
func (s *series) begin() { s.active.Add(1) }

// end records a completed call of duration d with status st; cancelled
// says it failed because its context was cancelled (Cancelled): it is
// counted apart from the failures; late says it is a SERVER_TIMEOUT
// whose method succeeded after the consumer's deadline (counted in
// MethodStats.Late too). at is when it ended (for throughput),
// as time since clockBase, replaced by the registry's clock when WithClock
// set one.
func (s *series) end(d time.Duration, st spi.Status, cancelled, late bool, at time.Duration) {
	s.active.Add(-1)
	if s.reg.clock {
		at = s.reg.since()
	}
	secs := d.Seconds()
	// The bucket a Prometheus histogram puts secs in: the first bound >= secs
	// (len(bounds): only +Inf).
	b := sort.SearchFloat64s(s.reg.bounds, secs)
	// whole microseconds rounded up, so that the histogram's quantiles
	// are never below the exact durations they stand for (truncated, the
	// one call of a row had max and p99 below its mean: tester53 finding 9)
	us := max(int64((d+time.Microsecond-1)/time.Microsecond), histMin)
	s.mu.Lock()
	_ = s.hist.RecordValue(min(us, histMax)) // clamped: never out of range
	s.count++
	s.sum += d
	s.longest = max(s.longest, d)
	s.seconds += secs
	if b < len(s.buckets) {
		s.buckets[b]++
	}
	if s.count == 1 {
		s.first, s.began = at, at-d
	}
	s.last = at
	sec := secondOf(at)
	const nb = int64(len(s.recent))
	rb := &s.recent[(sec%nb+nb)%nb]
	if rb.sec == sec {
		rb.n++
	} else {
		*rb = rateBucket{sec: sec, n: 1}
	}
	var failures prometheus.Counter
	switch {
	case cancelled:
		s.canceled++
	case st != spi.StatusOK:
		s.failed++
		rb.failed++
		if late {
			s.late++
		}
		if s.byStatus == nil {
			s.byStatus = map[spi.Status]int64{}
			s.failures = map[spi.Status]prometheus.Counter{}
		}
		s.byStatus[st]++
		// The counter is looked up in the vec once per status, not per
		// failed call (with statusOf, BenchmarkFilter failing: 443 -> 155
		// ns, 1 -> 0 allocs).
		if failures = s.failures[st]; failures == nil {
			failures = s.reg.failures.WithLabelValues(string(s.key.side), s.key.service, s.key.method, st.String())
			s.failures[st] = failures
		}
	}
	s.mu.Unlock()
	if failures != nil {
		failures.Inc()
	}
}

// MethodStats is one row of the stats table: one method of one service on
// one side, since the registry was created.
type MethodStats struct {
	Side     spi.Side `json:"side"`
	Service  string   `json:"service"`
	Method   string   `json:"method"`
	Count    int64    `json:"count"`    // completed calls, cancelled ones included
	Failures int64    `json:"failures"` // completed calls whose status was not OK, cancelled ones excluded
	// Cancelled counts the calls that failed while their context was
	// cancelled, not timed out (Cancelled): on the provider, mostly calls
	// whose consumer went away before the answer. They are in Count, not
	// in Failures, FailuresByStatus or SuccessRate. Calls the provider's
	// own shutdown abandoned are not: they are SERVER_ERROR failures
	// (CancelledBy).
	Cancelled int64 `json:"cancelled"`
	InFlight  int64 `json:"in_flight"` // calls started, not completed
	// Late counts, on the provider, the calls whose method succeeded but
	// whose result was ready only after the consumer's deadline (the
	// request's timeout, counted from when the provider read it): the
	// provider did not send it and the consumer got SERVER_TIMEOUT, so
	// they are SERVER_TIMEOUT failures here too (in Failures and
	// FailuresByStatus). Dubbo's provider-side TimeoutFilter logs such
	// calls. 0 on the consumer.
	Late int64 `json:"late"`
	// SuccessRate is (Count-Cancelled-Failures)/(Count-Cancelled): the
	// share of OK among the calls that were not cancelled, in [0, 1]; 0
	// when there are none (WriteTable prints "-", the JSON null:
	// MarshalJSON).
	SuccessRate float64 `json:"success_rate"`
	// MeanMillis, P99Millis and MaxMillis are call latencies in
	// milliseconds. MaxMillis is exact; P99 has 1% precision (HdrHistogram,
	// 2 significant digits, microseconds rounded up) and is never above
	// MaxMillis, so max >= mean, and one call's p99 and max are its mean.
	MeanMillis float64 `json:"mean_ms"`
	P99Millis  float64 `json:"p99_ms"`
	MaxMillis  float64 `json:"max_ms"`
	// Throughput is completed calls per second between the first and the
	// last completion (0 with fewer than 2 calls): the average of the
	// method's busy time, which one late call after an idle spell drags
	// down (21439 calls/s of a benchmark became 2874 with one call 5
	// minutes later). Kept for readers of /stats; RecentTPS and
	// LifetimeTPS say what they measure.
	Throughput float64 `json:"throughput"`
	// RecentTPS is completed calls per second over the last
	// RecentWindowSeconds: RateWindow, or since the start of the first
	// call when that is more recent, at least 1 s; from
	// per-second counts, the oldest second taken for its share inside the
	// window. 0 when no call completed in the window.
	RecentTPS float64 `json:"recent_tps"`
	// RecentFailures is failed calls (cancelled ones excluded) per second
	// over the same window as RecentTPS, counted the same way: 0 again
	// RecentWindowSeconds after a fault stops, where Failures and
	// FailuresByStatus stay at their totals.
	RecentFailures float64 `json:"recent_failures_per_s"`
	// RecentWindowSeconds is the window RecentTPS and RecentFailures are
	// over, in seconds: 10 (RateWindow), or the time since the start of
	// the method's first call when that is shorter (at least 1), so that
	// recent_tps * recent_window_s is the calls counted; 10 on a row with
	// no completed call. 0 only from a node older than RecentTPS.
	RecentWindowSeconds float64 `json:"recent_window_s"`
	// LifetimeTPS is Count over the time from the start of the first call
	// to the moment the row was read (at least 1 s): the average since the
	// method was first called, idle time included.
	LifetimeTPS float64 `json:"lifetime_tps"`
	// FailuresByStatus maps status names (e.g. "SERVER_TIMEOUT") to counts
	// ({} in JSON when none failed).
	FailuresByStatus map[string]int64 `json:"failures_by_status"`
}

// MarshalJSON writes s as its fields' tags say, except that success_rate
// is null when no call was rated (every call cancelled or in flight),
// where the table prints "-": a 0 would read as every call failed.
func (s MethodStats) MarshalJSON() ([]byte, error) {
	type plain MethodStats // the same fields, without this method
	if s.FailuresByStatus == nil {
		s.FailuresByStatus = map[string]int64{} // {}, not null
	}
	var rate *float64
	if s.Count-s.Cancelled > 0 {
		rate = &s.SuccessRate
	}
	return json.Marshal(struct {
		plain
		SuccessRate *float64 `json:"success_rate"`
	}{plain(s), rate})
}

// Snapshot returns one row per series, sorted by service, method, then
// side (consumer first). A series with no call, ended or in flight (every
// call of the method so far refused by the token filter), has no row.
func (r *Registry) Snapshot() []MethodStats {
	var out []MethodStats
	r.series.Range(func(_, v any) bool {
		if st := v.(*series).stats(); st.Count > 0 || st.InFlight > 0 {
			out = append(out, st)
		}
		return true
	})
	slices.SortFunc(out, func(a, b MethodStats) int {
		return cmp.Or(strings.Compare(a.Service, b.Service), strings.Compare(a.Method, b.Method),
			strings.Compare(string(a.Side), string(b.Side)))
	})
	return out
}

// Lookup returns the row of one side, service and method, and whether it
// has been seen.
func (r *Registry) Lookup(side spi.Side, service, method string) (MethodStats, bool) {
	v, ok := r.series.Load(seriesKey{side, service, method})
	if !ok {
		return MethodStats{}, false
	}
	return v.(*series).stats(), true
}

func (s *series) stats() MethodStats {
	st := MethodStats{Side: s.key.side, Service: s.key.service, Method: s.key.method, InFlight: s.active.Load(),
		RecentWindowSeconds: RateWindow.Seconds()}
	now := s.reg.since()
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Count, st.Failures, st.Cancelled, st.Late = s.count, s.failed, s.canceled, s.late
	if rated := s.count - s.canceled; rated > 0 {
		st.SuccessRate = float64(rated-s.failed) / float64(rated)
	}
	if s.count > 0 {
		st.MeanMillis = float64(s.sum) / float64(s.count) / float64(time.Millisecond)
		// the exact longest call; p99 from the histogram (2 significant
		// digits, rounded up) but never above it: one call's p99 and max
		// are its duration, its mean
		st.MaxMillis = float64(s.longest) / float64(time.Millisecond)
		st.P99Millis = min(float64(s.hist.ValueAtQuantile(99))/1000, st.MaxMillis)
	}
	if el := s.last - s.first; s.count > 1 && el > 0 {
		st.Throughput = float64(s.count) / el.Seconds()
	}
	if s.count > 0 {
		st.LifetimeTPS = float64(s.count) / max(now-s.began, time.Second).Seconds()
		st.RecentTPS, st.RecentFailures, st.RecentWindowSeconds = s.recentRates(now)
	}
	if len(s.byStatus) > 0 {
		st.FailuresByStatus = make(map[string]int64, len(s.byStatus))
		for k, n := range s.byStatus {
			st.FailuresByStatus[k.String()] = n
		}
	}
	return st
}

// recentRates returns calls and failed calls per second over
// [now-RateWindow, now], or from the first call when that is later,
// dividing by at least 1 s, and that window in seconds
// (RecentWindowSeconds: RateWindow's 10, or less for a method first
// called less than 10 s ago, at least 1). The second the window starts in
// counts for the share of it inside the window (its calls taken as spread
// evenly), unless the first call came after the window's start. s.mu is
// held.
func (s *series) recentRates(now time.Duration) (calls, failed, window float64) {
	from := now - RateWindow
	low, high := secondOf(from), secondOf(now)
	for _, rb := range s.recent {
		share := 0.0
		switch {
		case rb.sec > low && rb.sec <= high:
			share = 1
		case rb.sec == low && s.began >= from:
			share = 1
		case rb.sec == low:
			share = (time.Duration(low+1)*time.Second - from).Seconds()
		}
		calls += float64(rb.n) * share
		failed += float64(rb.failed) * share
	}
	d := max(now-max(from, s.began), time.Second).Seconds()
	return calls / d, failed / d, d
}

// Counters returns the process-wide counters by their dotted names
// ("heartbeat.pings_sent", "registry.session_expiries", ...), and the
// current values of the process-wide gauges ("channels.unsent_bytes",
// "channels.unsent_making_bytes").
func Counters() map[string]uint64 {
	out := map[string]uint64{}
	for _, c := range processCounters() {
		out[c.key] = c.c.Load()
	}
	for _, g := range processGauges() {
		out[g.key] = uint64(max(g.g.Load(), 0))
	}
	return out
}

// The process-wide counters (package internal/counters), for layers that
// import this package; the kernel, which may not import extensions,
// increments the same values through internal/counters.
var (
	// Heartbeat: pings sent/answered/failed/received, reconnects, idle closes.
	Heartbeat = &counters.Heartbeat
	// RegistryEvents: registry notifications and session expiries.
	RegistryEvents = &counters.Registry
	// Access: token rejections, executes and threads rejections, actives
	// timeouts.
	Access = &counters.Access
	// ProviderRejections: provider requests answered SERVICE_NOT_FOUND or
	// BAD_REQUEST before any service's filter chain (WriteRejected).
	ProviderRejections = &counters.Provider
)

// registryConnectedDesc is airnode_registry_connected.
var registryConnectedDesc = prometheus.NewDesc("airnode_registry_connected",
	"1 while this process's registry connection holds a session (ZooKeeper: connected, the session established), 0 while it has none (ZooKeeper unreachable, session expired, reconnecting); labelled registry=\"zookeeper://host:port[,host:port]\", one series per ensemble (0 while any of the process's registries on it has none), from its first connection until it is closed. Registries without a connection (file, memory, direct) have no series. Read when scraped.",
	[]string{"registry"}, nil)

// registryConnectedCollector exports counters.RegistryConnections as
// airnode_registry_connected, read when scraped.
type registryConnectedCollector struct{}

// Describe sends registryConnectedDesc.
func (registryConnectedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- registryConnectedDesc }

// Collect sends one sample per registry connection.
func (registryConnectedCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range counters.RegistryConnections.States() {
		ch <- prometheus.MustNewConstMetric(registryConnectedDesc, prometheus.GaugeValue, boolValue(s.Connected), s.Name)
	}
}

// retriesDesc is airnode_consumer_retries_total.
var retriesDesc = prometheus.NewDesc("airnode_consumer_retries_total",
	"Retries of the failover cluster (the default), by the reference's service key and outcome: made (a retry sent to a provider, the attempts after a call's first), budget_refused (a retry the reference's retry budget, URL key retry.tokens, did not allow: the call failed with its last attempt's status, one per such call). Process-wide, from a service key's first retry on.",
	[]string{"service", "outcome"}, nil)

// retriesCollector exports counters.Retry as
// airnode_consumer_retries_total, read when scraped.
type retriesCollector struct{}

// Describe sends retriesDesc.
func (retriesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- retriesDesc }

// Collect sends two samples, made and budget_refused, per service key
// that has retried.
func (retriesCollector) Collect(ch chan<- prometheus.Metric) {
	counters.Retry.Each(func(service string, r *counters.Retries) {
		ch <- prometheus.MustNewConstMetric(retriesDesc, prometheus.CounterValue, float64(r.Made.Load()), service, "made")
		ch <- prometheus.MustNewConstMetric(retriesDesc, prometheus.CounterValue, float64(r.BudgetRefused.Load()), service, "budget_refused")
	})
}

// connectionsDesc is airnode_provider_connections.
var connectionsDesc = prometheus.NewDesc("airnode_provider_connections",
	"Consumer connections this process's providers serve now (accepted and not yet finished; those refused at the accepts limit are not), by transport name; 0 from a provider's start until its first consumer connects. Read when scraped.",
	[]string{"transport"}, nil)

// connectionsCollector exports counters.ProviderConnections as
// airnode_provider_connections, read when scraped.
type connectionsCollector struct{}

// Describe sends connectionsDesc.
func (connectionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- connectionsDesc }

// Collect sends one sample per transport a provider of the process
// listens with, or did.
func (connectionsCollector) Collect(ch chan<- prometheus.Metric) {
	counters.ProviderConnections.Each(func(transport string, g *counters.Gauge) {
		ch <- prometheus.MustNewConstMetric(connectionsDesc, prometheus.GaugeValue, float64(g.Load()), transport)
	})
}

// ProviderConnections returns the consumer connections this process's
// providers serve now, by transport name (airnode_provider_connections);
// nil when no provider of the process has listened.
func ProviderConnections() map[string]int64 {
	var out map[string]int64
	counters.ProviderConnections.Each(func(transport string, g *counters.Gauge) {
		if out == nil {
			out = map[string]int64{}
		}
		out[transport] = g.Load()
	})
	return out
}

// Package metrics is the "metrics" filter and the node's metrics registry:
// for every service and method, on the consumer and on the provider, it
// counts calls, failures by status name, cancelled calls (Cancelled: the
// consumer went away; no failure — but a provider call abandoned by its own
// node's shutdown is a SERVER_ERROR failure, CancelledBy) and calls in
// flight, and records
// call latency, exported with prometheus/client_golang on an own
// *prometheus.Registry (never the global one) and as the AirRPC-style
// table of success rate, mean and p99 latency, count and calls per second
// (over the last RateWindow, 10 s, and since the first call). On the
// provider, a call whose method succeeded only after its consumer's
// deadline (spi.Invocation.Due: the request's timeout counted from when
// the provider read it; the result is not sent) is a SERVER_TIMEOUT
// failure, as its consumer saw it, and counted in MethodStats.Late; what
// the provider cannot see is the time the request spent in the
// consumer's queue and on the network.
//
// Registered name "metrics"; activated by default on both sides
// (Activation{Sides: consumer, provider; Order: -200}: outermost, so the
// latency it records includes the other filters and it counts the calls
// they refuse); "filter=-metrics" removes it for one reference or export.
// It has no URL keys of its own; it reads "side" (consumer or provider,
// set by the kernel) to label the series.
//
// Registry.Handler serves GET /metrics (Prometheus text format) and GET
// /stats (JSON; "?format=text" prints the table). Listen runs that handler
// on an address; Server.Close stops it and waits for its goroutine. Given
// WithHealth, a Server also answers GET /ready (200 "serving", or 503 and
// the reason: starting, draining, a failing check) and GET /live (200),
// exports airnode_ready, airnode_draining, airnode_plugin_up{plugin},
// airnode_plugin_unresponsive{plugin} and airnode_health_warning{check},
// and puts the node's HealthReport in /stats (airnode serve --metrics).
// The program moves the Health to serving; given to the node with
// kernel.WithHealth, it is marked draining when the node's Shutdown
// begins. The process-wide counters of package internal/counters (heartbeat pings,
// reconnects, idle closes, registry notifications and session expiries,
// token and limit rejections, provider requests rejected before any
// service's filter chain) are exported by every Registry; this package
// re-exports them as Heartbeat, RegistryEvents, Access and
// ProviderRejections; with them, airnode_registry_connected{registry},
// 1 or 0 for each ZooKeeper registry's session, read when scraped
// (counters.RegistryConnections; no series for registries without a
// connection: file, memory, direct). The last are the calls no method series counts
// (unknown service or method, bad arguments): they are counted by status
// only, airnode_provider_rejected_total{status}, and WriteRejected prints
// them under the table, with the calls the token filter refused
// (airnode_token_rejections_total) and those a provider-side filter
// plugin refused with spi.ErrAccessDenied as the Cause
// (airnode_plugin_filter_rejections_total), which no method series counts either:
// on the provider, a call whose error's Cause is spi.ErrAccessDenied is
// left out of its method's series.
//
// On a consumer node the Builder also exports, when scraped, what the
// kernel already counts per provider (spi.ProviderStatsUser:
// kernel.NewNode hands it the node's ProviderStats; nothing is recorded
// per call for it): airnode_consumer_provider_{calls,failures}_total
// (failures also labelled status), _in_flight, _mean_response_seconds,
// _available, _ejected, _weight (the balancers' effective weight, warm-up
// applied, from extensions/lb/warmup) and _warmup_remaining_seconds, labelled
// service and provider (host:port), one series per provider of the
// directory, gone when the provider leaves it; /stats has them in
// "providers" and WriteProviders prints them. A method row's
// RecentFailures (FAIL/10s) is its failures per second over RateWindow,
// next to the lifetime FailuresByStatus.
//
// On a provider, airnode_provider_connections{transport} is the consumer
// connections the process serves now (internal/counters
// ProviderConnections, read when scraped); /stats has it in
// "provider_connections".
//
// Everything here is safe for concurrent use. A Registry keeps at most
// MaxSeries (1000) method series; calls of further methods are folded into the
// method "_other" so that a client sending random method names cannot grow
// memory without bound.
package metrics

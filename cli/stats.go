package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// statsCommand returns `airnode stats ADDR`: the AirRPC-style table of a
// running node's /stats endpoint (airnode serve --metrics ADDR).
func statsCommand(a *app) *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stats ADDR",
		Short: "Print a node's call statistics (success rate, mean/p99 latency, count, calls/s per method)",
		Long: `stats reads the /stats endpoint that airnode serve --metrics ADDR serves
and prints one line per side, service and method: count, success rate,
mean and p99 latency, calls per second (TPS/10s: over the last 10 s, or
since the method's first call when that is more recent, as Prometheus'
rate() reads it, so it is 0 for a method idle that long;
TPS/avg: since the method's first call, idle time included), calls in
flight, cancelled calls, failures per second over the last 10 s
(FAIL/10s: 0 again 10 s after a fault stops) and failures by status
since the start. A call
that failed because it was given up on — on the provider, its consumer
went away before the answer (Ctrl-C, a crash) — is counted CANCELLED,
not as a failure, and SUCCESS is over the other calls ("-" when there
are none); a call the provider's own shutdown abandoned (shutdown.timeout
passed) is a SERVER_ERROR failure, as its consumer was told. Requests the provider
answered before any service saw them (unknown service or method:
SERVICE_NOT_FOUND; wrong argument count or undecodable argument:
BAD_REQUEST) are in no row; a last line counts them by status, and the
calls the token filter refused (wrong or missing token; their consumers
got BAD_REQUEST, the method did not run). On a node with references
(a consumer), one more table has a line per service and provider
address: the provider calls (a failover retry counts on each provider
it tried) and failures since the provider entered the directory, their
ratio, calls in flight, the mean of the successful ones over the last
30 s, and whether the node may pick it now (available; warming up
included), its entry has weight 0, taken out of rotation with serve -p
weight=0, while it is connected (weight0), outlier detection keeps it
out of the picks while it is connected (ejected) or it has no usable
connection, connecting, reconnecting or draining, ejected or not
(unavailable). SUCCESS and FAILED print 100.00% and 0.00% only when
exact: 8 failures of 451482 calls are >99.99% and <0.01%. --json
prints the endpoint's JSON, which also holds the heartbeat, registry,
access and provider counters (see below). An address that refuses the connection
or does not answer HTTP is reported as such (give serve --metrics's
address, not the RPC port); a node that accepts the connection but does
not answer within --timeout is reported as hung (SIGSTOP, swap, GC) or
overloaded.

  airnode stats 127.0.0.1:9090

--json prints one object:
  methods: one object per side, service and method (the table's rows):
    side ("consumer", "provider"), service, method, count (completed
    calls, cancelled ones included), failures (not OK, cancelled ones
    excluded), cancelled, late (provider: calls whose method succeeded
    after the consumer's deadline, counted SERVER_TIMEOUT, as the consumer
    got), in_flight, success_rate (0 to 1; null when no
    call was rated), mean_ms, p99_ms, max_ms (latencies, ms), throughput
    (calls/s between the first and the last completion), recent_tps and
    recent_failures_per_s (per second over the last recent_window_s
    seconds), lifetime_tps (calls/s since the first call, idle time
    included), failures_by_status (status name -> count; {} when none)
  counters: name -> count (heartbeat, registry, access and refused
    requests: the last lines of the table)
  health (serve --metrics): ready (bool), state, reason (why it is not
    ready; "" when ready), plugins (name -> running; {} without plugins),
    warnings (failing warnings, "name: error"; [] when none)
  providers (a node with references; absent otherwise): service,
    provider (host:port), calls, failures, failures_by_status (status
    name -> count; {} when none), in_flight, mean_ms (of the successful
    calls over the last 30 s; null when none succeeded), available (the
    node may pick it now), connected (a connection can take calls,
    ejected or not), ejected, weight_zero (its entry has weight 0),
    state (the table's STATE: available, weight0, ejected, or
    unavailable, which a provider with no usable connection is, ejected
    or weight 0 or not), weight (its entry's), effective_weight (the
    weight the balancers pick it with now: less while it warms up, 0 at
    weight 0) and warmup_left_s (0 once warm), as registry ls --json
    names them (the table's WEIGHT, "49/100" while warming, and WARM-UP)
  provider_connections (a provider process; absent otherwise): transport
    -> consumer connections served now (the table's "provider
    connections:" line)`,
		Args: argsRange(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return usage(fmt.Errorf("stats: --timeout %v: want a positive duration such as 5s (how long to wait for the /stats endpoint)", timeout))
			}
			if strings.TrimSpace(args[0]) == "" {
				return usage(fmt.Errorf("stats: ADDRESS %q: want the host:port of serve --metrics (127.0.0.1:9090), not an empty argument", args[0]))
			}
			if err := checkStatsAddr(args[0]); err != nil {
				return usage(err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			rep, err := metrics.Fetch(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := jsonOutput(a.stdout)
				return enc.Encode(rep)
			}
			if err := metrics.WriteTable(a.stdout, rep.Methods); err != nil {
				return err
			}
			if err := metrics.WriteRejected(a.stdout, rep.Counters); err != nil {
				return err
			}
			if err := metrics.WriteConnections(a.stdout, rep.ProviderConnections); err != nil {
				return err
			}
			if err := metrics.WriteProviders(a.stdout, rep.Providers); err != nil {
				return err
			}
			if rep.Health != nil { // serve's /stats: readiness, plugins down, warnings
				return metrics.WriteHealth(a.stdout, *rep.Health)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the /stats JSON instead of the table")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long (positive)")
	return cmd
}

// checkStatsAddr returns the usage error for a stats ADDR of the wrong
// form: host:port, or an http(s) URL of the endpoint
// (http://127.0.0.1:9090, .../stats), as metrics.Fetch takes it.
func checkStatsAddr(addr string) error {
	if !strings.Contains(addr, "://") {
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return fmt.Errorf("stats: ADDRESS %q: want the host:port of serve --metrics (127.0.0.1:9090) or its URL (http://127.0.0.1:9090)", addr)
		}
		return nil
	}
	if u, err := url.Parse(addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("stats: ADDRESS %q: want the host:port of serve --metrics (127.0.0.1:9090) or its http:// URL", addr)
	}
	return nil
}

package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns the registry's HTTP handler: GET /metrics in the
// Prometheus exposition format, GET /stats as StatsReport JSON, and GET
// /stats?format=text as the table WriteTable prints.
func (r *Registry) Handler() http.Handler { return r.handler(nil) }

// HandlerWithHealth is Handler plus h: GET /ready and GET /live (h's
// ReadyHandler and LiveHandler), airnode_ready, airnode_draining,
// airnode_plugin_up{plugin}, airnode_plugin_unresponsive{plugin} and
// airnode_health_warning{check} in /metrics, and h's HealthReport as
// "health" in /stats (a "node:" line under the text table).
func (r *Registry) HandlerWithHealth(h *Health) http.Handler { return r.handler(h) }

// handler serves r, and h when not nil.
func (r *Registry) handler(h *Health) http.Handler {
	mux := http.NewServeMux()
	if h == nil {
		mux.Handle("GET /metrics", r.MetricsHandler())
		mux.Handle("GET /stats", r.StatsHandler())
		return mux
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(prometheus.Gatherers{r.prom, h.gatherer()}, promhttp.HandlerOpts{}))
	mux.Handle("GET /stats", r.statsHandler(func() StatsReport {
		rep, hr := r.Report(), h.Report()
		rep.Health = &hr
		return rep
	}))
	mux.Handle("GET /ready", h.ReadyHandler())
	mux.Handle("GET /live", h.LiveHandler())
	return mux
}

// MetricsHandler serves the Prometheus exposition of the registry only.
func (r *Registry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(r.prom, promhttp.HandlerOpts{})
}

// StatsReport is the JSON document /stats serves.
type StatsReport struct {
	Methods  []MethodStats     `json:"methods"`
	Counters map[string]uint64 `json:"counters"`
	// Health is the node's readiness when the server has one (WithHealth:
	// airnode serve --metrics); nil otherwise.
	Health *HealthReport `json:"health,omitempty"`
	// Providers are a consumer node's providers, one per service and
	// provider address (Registry.Providers); omitted on a node with no
	// references.
	Providers []ProviderStats `json:"providers,omitempty"`
	// ProviderConnections are the consumer connections the process's
	// providers serve now, by transport name ("smux": 3;
	// airnode_provider_connections); omitted in a process with no
	// provider.
	ProviderConnections map[string]int64 `json:"provider_connections,omitempty"`
}

// Report returns the registry's rows and the process-wide counters.
func (r *Registry) Report() StatsReport {
	m := r.Snapshot()
	if m == nil {
		m = []MethodStats{}
	}
	return StatsReport{Methods: m, Counters: Counters(), Providers: r.Providers(), ProviderConnections: ProviderConnections()}
}

// StatsHandler serves Report as JSON, or as a text table with
// "?format=text".
func (r *Registry) StatsHandler() http.Handler { return r.statsHandler(r.Report) }

// statsHandler serves what report returns as StatsHandler does, with a
// "node:" line under the text table when it has a HealthReport.
func (r *Registry) statsHandler(report func() StatsReport) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rep := report()
		switch f := req.URL.Query().Get("format"); f {
		case "", "json":
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		case "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = WriteTable(w, rep.Methods)
			_ = WriteRejected(w, rep.Counters)
			_ = WriteConnections(w, rep.ProviderConnections)
			_ = WriteProviders(w, rep.Providers)
			if rep.Health != nil {
				_ = WriteHealth(w, *rep.Health)
			}
		default:
			http.Error(w, fmt.Sprintf("metrics: format %q: want json or text", f), http.StatusBadRequest)
		}
	})
}

// share is part/whole (whole > 0) as a percentage with two decimals, the
// tables' SUCCESS and FAILED, except that a share which is not exactly 0
// or 100 % never prints as one: 8 of 451482 is "<0.01%", 451474 of them
// ">99.99%" (tester92 #2: the rounding read as "nothing failed").
func share(part, whole int64) string {
	switch {
	case part <= 0:
		return "0.00%"
	case part >= whole:
		return "100.00%"
	}
	switch pct := fmt.Sprintf("%.2f", 100*float64(part)/float64(whole)); pct {
	case "0.00":
		return "<0.01%"
	case "100.00":
		return ">99.99%"
	default:
		return pct + "%"
	}
}

// tpsLegend is the line under the table saying what its two throughput
// columns measure.
const tpsLegend = "TPS/10s: calls/s over the last 10 s (since the first call when it is more recent, at least 1 s); TPS/avg: calls/s since the method's first call; FAIL/10s: failed calls/s over the same window"

// WriteTable prints rows as the AirRPC-style table, one line per method:
//
//	SIDE      SERVICE    METHOD  COUNT  SUCCESS  MEAN     P99      TPS/10s  TPS/avg  IN-FLIGHT  CANCELLED  FAIL/10s  FAILURES
//	provider  demo.Echo  Echo    1000   100.00%  0.052ms  0.210ms  9804.1   3.3      0          0          0.0
//	provider  demo.Echo  Sleep   3      50.00%   2.1ms    5.0ms    0.0      0.1      0          1          0.1       SERVICE_ERROR=1
//	TPS/10s: calls/s over the last 10 s (since the first call when it is more recent, at least 1 s); TPS/avg: calls/s since the method's first call; FAIL/10s: failed calls/s over the same window
//
// SUCCESS is over the calls that were not cancelled ("-" when there are
// none), with two decimals (share: "100.00%" only when none failed,
// ">99.99%" when a few of many did); TPS/10s is MethodStats.RecentTPS, TPS/avg LifetimeTPS (the
// legend line, printed under rows, says so); CANCELLED counts the calls
// given up on (MethodStats.Cancelled); FAIL/10s is RecentFailures, the
// failures still going on, next to FAILURES, the failed calls since the
// start by status name, sorted by name. A row from a node older than
// RecentTPS (recent_window_s 0) shows "-" for the three rates.
func WriteTable(w io.Writer, rows []MethodStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIDE\tSERVICE\tMETHOD\tCOUNT\tSUCCESS\tMEAN\tP99\tTPS/10s\tTPS/avg\tIN-FLIGHT\tCANCELLED\tFAIL/10s\tFAILURES")
	for _, s := range rows {
		success := "-"
		if rated := s.Count - s.Cancelled; rated > 0 {
			success = share(rated-s.Failures, rated)
		}
		recent, avg, recentFails := "-", "-", "-"
		if s.RecentWindowSeconds > 0 {
			recent, avg = strconv.FormatFloat(s.RecentTPS, 'f', 1, 64), strconv.FormatFloat(s.LifetimeTPS, 'f', 1, 64)
			recentFails = strconv.FormatFloat(s.RecentFailures, 'f', 1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.3fms\t%.3fms\t%s\t%s\t%d\t%d\t%s\t%s\n",
			s.Side, s.Service, s.Method, s.Count, success, s.MeanMillis, s.P99Millis, recent, avg, s.InFlight, s.Cancelled, recentFails, byStatus(s.FailuresByStatus))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := fmt.Fprintln(w, tpsLegend)
	return err
}

// WriteRejected prints, when counters (StatsReport.Counters) hold any, the
// provider requests answered before any service's filter chain, which no
// row of WriteTable counts (process-wide, by status only):
//
//	provider requests rejected before the service: SERVICE_NOT_FOUND 3, BAD_REQUEST 2, wrong or missing token 1
//
// SERVICE_NOT_FOUND: unknown service or method; BAD_REQUEST: wrong
// argument count or undecodable argument; wrong or missing token: calls
// the token filter refused (their consumers were answered BAD_REQUEST;
// Prometheus: airnode_token_rejections_total); denied by a filter
// plugin: calls a provider-side filter plugin refused with
// spi.ErrAccessDenied as the Cause (their consumers got the plugin's
// status; airnode_plugin_filter_rejections_total); refused at the TLS
// handshake: connections whose TLS handshake the provider failed, by any
// reason (airnode_tls_handshake_failures_total{reason}). It prints nothing when there are
// none, or when counters come from a node without these counters.
func WriteRejected(w io.Writer, counters map[string]uint64) error {
	var parts []string
	for _, k := range rejectedKeys {
		if n := counters[k[0]]; n > 0 {
			parts = append(parts, k[1]+" "+strconv.FormatUint(n, 10))
		}
	}
	var tlsRefused uint64
	for _, k := range tlsFailureKeys {
		tlsRefused += counters[k]
	}
	if tlsRefused > 0 {
		parts = append(parts, "refused at the TLS handshake "+strconv.FormatUint(tlsRefused, 10))
	}
	if len(parts) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "provider requests rejected before the service: %s\n", strings.Join(parts, ", "))
	return err
}

// WriteHealth prints a node's readiness under the text table (/stats?format=text,
// `airnode stats`), one line:
//
//	node: serving, ready
//	node: draining, not ready: draining: SIGTERM signal received
//	node: serving, ready; warning: registry: session expired
//	node: serving, ready; plugin restarts: greeter 3
//
// "plugin restarts" lists the plugins restarted at least once since the
// node started, with their count (airnode_plugin_restarts_total).
func WriteHealth(w io.Writer, h HealthReport) error {
	line := "node: " + string(h.State) + ", ready"
	if !h.Ready {
		line = "node: " + string(h.State) + ", not ready: " + h.Reason
	}
	var down []string
	for name, up := range h.Plugins {
		if !up {
			down = append(down, name)
		}
	}
	if len(down) > 0 {
		slices.Sort(down)
		line += "; plugins down: " + strings.Join(down, ", ")
	}
	var restarted []string
	for _, name := range slices.Sorted(maps.Keys(h.PluginRestarts)) {
		if n := h.PluginRestarts[name]; n > 0 {
			restarted = append(restarted, fmt.Sprintf("%s %d", name, n))
		}
	}
	if len(restarted) > 0 {
		line += "; plugin restarts: " + strings.Join(restarted, ", ")
	}
	for _, warn := range h.Warnings {
		line += "; warning: " + warn
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// Server serves a Registry's Handler on one address (`airnode serve
// --metrics ADDR`). It owns one goroutine; Close stops it.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	err  error // Serve's result, valid after done
	once sync.Once
}

// ServerOption configures a Server (Listen).
type ServerOption func(*serverConfig)

// serverConfig is what ServerOptions set.
type serverConfig struct {
	health *Health
}

// WithHealth serves h next to the registry (HandlerWithHealth): GET
// /ready, GET /live, the health series in /metrics and "health" in
// /stats.
func WithHealth(h *Health) ServerOption { return func(c *serverConfig) { c.health = h } }

// Listen binds addr ("127.0.0.1:9090"; port 0 picks a free one) and serves
// r.Handler on it (r.HandlerWithHealth with WithHealth) until Close. A
// bind failure is returned, naming addr.
func Listen(addr string, r *Registry, opts ...ServerOption) (*Server, error) {
	var c serverConfig
	for _, o := range opts {
		o(&c)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	s := &Server{ln: ln, done: make(chan struct{}), srv: &http.Server{
		Handler:           r.handler(c.health),
		ReadHeaderTimeout: 5 * time.Second,
	}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// Addr returns the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, closing open connections, and waits for its
// goroutine. Idempotent: later calls return the first call's result.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		err = s.srv.Close()
		<-s.done
		if err == nil {
			err = s.err
		}
		if err != nil {
			err = fmt.Errorf("metrics: %w", err)
		}
	})
	return err
}

// Fetch reads a StatsReport from a /stats endpoint: addr is "host:port" or
// a URL ("http://127.0.0.1:9090"); the path /stats is added. It gives up
// when ctx ends. For `airnode stats ADDR`: Fetch, then WriteTable. Its
// errors tell apart an address that refused the connection or did not
// speak HTTP (the hint: give serve --metrics's address, not the RPC port)
// from a node that took the request and did not answer before ctx ended
// (hung or overloaded; fetchError).
func Fetch(ctx context.Context, addr string) (StatsReport, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/stats") // "http://h:p/stats" names the endpoint itself
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stats", nil)
	if err != nil {
		return StatsReport{}, fmt.Errorf("metrics: stats from %s: %w", addr, err)
	}
	req.Close = true // a one-off request: leave no idle connection behind
	var connected atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { connected.Store(true) },
	}))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return StatsReport{}, fetchError(addr, err, connected.Load() && errors.Is(err, context.DeadlineExceeded), time.Since(start))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return StatsReport{}, fmt.Errorf("metrics: stats from %s: %s", addr, resp.Status)
	}
	var rep StatsReport
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&rep); err != nil {
		return StatsReport{}, fmt.Errorf("metrics: stats from %s: %w (is it the address of serve --metrics?)", addr, err)
	}
	return rep, nil
}

// fetchError is Fetch's error for a request that got no answer: err from
// the HTTP client, after waited. answerless: the request was written on a
// connection and ctx ended before any answer, so the address is right and
// the node is not answering: a process stopped (SIGSTOP), swapping or in
// a long GC pause accepts connections in its kernel's backlog but never
// reads them. Otherwise the address refused the connection or did not
// speak HTTP, and the hint is to give serve --metrics's address.
func fetchError(addr string, err error, answerless bool, waited time.Duration) error {
	if answerless {
		return fmt.Errorf("metrics: stats from %s: the node at %s accepted the connection but did not answer in %v: hung (SIGSTOP, swap, GC) or overloaded (%w)",
			addr, addr, waited.Round(100*time.Millisecond), err)
	}
	return fmt.Errorf("metrics: stats from %s: %w (give the address of serve --metrics, not the RPC port)", addr, err)
}

// WriteConnections prints, when conns holds any (a provider process),
// one line of the consumer connections its providers serve now, with
// each transport's when it has several:
//
//	provider connections: 3
//	provider connections: 5 (smux 3, tcp 2)
func WriteConnections(w io.Writer, conns map[string]int64) error {
	if len(conns) == 0 {
		return nil
	}
	var total int64
	names := make([]string, 0, len(conns))
	for name, n := range conns {
		total += n
		names = append(names, name)
	}
	line := fmt.Sprintf("provider connections: %d", total)
	if len(names) > 1 {
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, name := range names {
			parts[i] = fmt.Sprintf("%s %d", name, conns[name])
		}
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

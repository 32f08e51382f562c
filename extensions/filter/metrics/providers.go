package metrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/airnode/airnode/spi"
)

// ProviderStats is one row of the consumer's per-provider table: one
// provider of one service as the node's references see it, summed over
// the references (and nodes sharing the registry) that call it. /stats
// serves these in "providers"; airnode_consumer_provider_* export them.
type ProviderStats struct {
	Service  string `json:"service"`  // the reference's service key
	Provider string `json:"provider"` // host:port
	// Calls are the finished calls to the provider since its invoker was
	// made (a provider that leaves the directory and comes back starts
	// from 0), one per provider call: a failover retry counts on each
	// provider it tried. Failures are those that failed, whatever the
	// status (timeouts and dead connections included), and
	// FailuresByStatus splits them by status name (SERVER_TIMEOUT,
	// SERVER_THREADPOOL_EXHAUSTED, CHANNEL_INACTIVE ...: {} in JSON when
	// none failed), as the method rows' FailuresByStatus.
	Calls            int64            `json:"calls"`
	Failures         int64            `json:"failures"`
	FailuresByStatus map[string]int64 `json:"failures_by_status"`
	InFlight         int64            `json:"in_flight"`
	// MeanMillis is the mean response time of the successful calls over
	// the last spi.DefaultSlidePeriod (30 s; falling back to the window
	// before while the current one is empty), in milliseconds; 0 when
	// there were none: WriteProviders prints "-", the JSON null
	// (MarshalJSON) and Prometheus has no sample, not a 0 ms latency.
	MeanMillis float64 `json:"mean_ms"`
	// Available: a reference may pick the provider now (connected, not
	// draining, not ejected, weight above 0; warming up counts).
	// Connected: one of its connections can take calls, ejected or not
	// (false while connecting or reconnecting). Ejected: outlier
	// detection took it out of the picks for a while
	// (outlier.consecutive failures in a row), connected or not.
	// WeightZero: its registry entry has weight 0 (serve -p weight=0), so
	// no balancer picks it; false in a row from a node that predates it.
	// State says which of them an operator reads.
	Available  bool `json:"available"`
	Connected  bool `json:"connected"`
	Ejected    bool `json:"ejected"`
	WeightZero bool `json:"weight_zero"`
	// Weight is the provider's configured weight (its entry's weight
	// key; 100 when absent or malformed, clamped as the balancers clamp
	// it), EffectiveWeight the weight the balancers pick it with when the
	// row is read: Weight once warm, less (at least 1) while it warms up,
	// 0 at weight 0, whatever its connection or ejection; WarmupLeftSec
	// the seconds of warm-up left (0 once warm, with warmup=0, weight 0 or
	// no timestamp). All three come from extensions/lb/warmup
	// (Weigher.Progress: warmup.Effective and warmup.Left, what the
	// balancers and registry ls compute), with registry ls --json's
	// names; 0 in a row from a node that predates them.
	Weight          int64   `json:"weight"`
	EffectiveWeight int64   `json:"effective_weight"`
	WarmupLeftSec   float64 `json:"warmup_left_s"`
}

// MarshalJSON writes p as its fields' tags say, and "state" (State: what
// the table's STATE and airnode_consumer_providers say), except that
// mean_ms is null when no call succeeded in the window (MeanMillis 0),
// where the table prints "-" and Prometheus has no sample: a 0 would read
// as a provider answering in no time, when it answered nothing in time.
// Decoding ignores "state": State computes it from the fields.
func (p ProviderStats) MarshalJSON() ([]byte, error) {
	type plain ProviderStats // the same fields, without this method
	if p.FailuresByStatus == nil {
		p.FailuresByStatus = map[string]int64{} // {}, not null
	}
	var mean *float64
	if p.MeanMillis > 0 {
		mean = &p.MeanMillis
	}
	return json.Marshal(struct {
		plain
		MeanMillis *float64 `json:"mean_ms"`
		State      string   `json:"state"`
	}{plain(p), mean, p.State()})
}

// The per-provider families providerCollector exports.
var (
	providerLabels    = []string{"service", "provider"}
	failureLabels     = []string{"service", "provider", "status"}
	providerCallsDesc = prometheus.NewDesc("airnode_consumer_provider_calls_total",
		"Consumer calls finished by each provider of each referenced service (one per provider call: a failover retry counts on each provider it tried), since the provider entered the directory.", providerLabels, nil)
	providerFailuresDesc = prometheus.NewDesc("airnode_consumer_provider_failures_total",
		"Of airnode_consumer_provider_calls_total, the calls that failed, by the status they ended with (SERVER_TIMEOUT, SERVER_THREADPOOL_EXHAUSTED, CHANNEL_INACTIVE ...); a provider with no failure has no sample.", failureLabels, nil)
	providerInFlightDesc = prometheus.NewDesc("airnode_consumer_provider_in_flight",
		"Consumer calls sent to the provider and not yet finished.", providerLabels, nil)
	providerMeanDesc = prometheus.NewDesc("airnode_consumer_provider_mean_response_seconds",
		"Mean response time of the provider's successful calls over the last 30 s (the window shortestresponse reads); absent while there were none.", providerLabels, nil)
	providerAvailableDesc = prometheus.NewDesc("airnode_consumer_provider_available",
		"1 while the consumer may pick the provider (connected, not draining, not ejected, weight above 0: warming up counts), else 0.", providerLabels, nil)
	providersDesc = prometheus.NewDesc("airnode_consumer_providers",
		"Providers the registry lists for each reference of this consumer, by state: available (the consumer may pick it), unavailable (connecting, reconnecting, draining: no usable connection, ejected or not), weight0 (connected, and its entry has weight 0: taken out of rotation, no balancer picks it), ejected (connected, and outlier detection keeps it out of the picks); all four 0 while none is listed, so sum by (service) == 0 alerts, and state=\"available\" == 0 when none can be called.", []string{"service", "state"}, nil)
	providerWeightDesc = prometheus.NewDesc("airnode_consumer_provider_weight",
		"The weight the consumer's balancers pick the provider with now: its configured weight once warm, less (at least 1) while it warms up (warmup key: weight x uptime / warmup), 0 at weight 0; whatever its connection or ejection (airnode_consumer_provider_available says whether it is picked at all).", providerLabels, nil)
	providerWarmupDesc = prometheus.NewDesc("airnode_consumer_provider_warmup_remaining_seconds",
		"Seconds of warm-up the provider has left (its weight ramps up until then), 0 once warm, with warmup=0, at weight 0 or without a timestamp.", providerLabels, nil)
	providerEjectedDesc = prometheus.NewDesc("airnode_consumer_provider_ejected",
		"1 while outlier detection keeps the provider out of the consumer's picks (outlier.consecutive failures in a row), else 0, whether or not it is connected (airnode_consumer_providers{state} says which: a provider with no usable connection is unavailable).", providerLabels, nil)
)

// sources are the lists the registry reads when scraped: one per node
// that uses the registry's Builder (UseProviderStats: the providers,
// UseReferences: the references' service keys).
type sources[T any] struct {
	mu   sync.Mutex
	next int
	list map[int]func() []T
}

// add keeps list until the returned release is called.
func (s *sources[T]) add(list func() []T) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil {
		s.list = map[int]func() []T{}
	}
	id := s.next
	s.next++
	s.list[id] = list
	return func() {
		s.mu.Lock()
		delete(s.list, id)
		s.mu.Unlock()
	}
}

// all returns the lists held now.
func (s *sources[T]) all() []func() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]func() []T, 0, len(s.list))
	for _, l := range s.list {
		out = append(out, l)
	}
	return out
}

// UseProviderStats makes the builder's Registry export the providers
// list returns (kernel.NewNode calls it: spi.ProviderStatsUser) until
// release is called (at the end of the node's Shutdown).
func (b *Builder) UseProviderStats(list func() []spi.ProviderStats) (release func()) {
	return b.reg.AddProviders(list)
}

// AddProviders makes r export, when scraped and in Report, the providers
// list returns (kernel.Node's ProviderStats), summed by service and
// provider with those of the other lists added, until release is called.
// list is called on every /metrics and /stats request, possibly
// concurrently; it must be cheap and must not block.
func (r *Registry) AddProviders(list func() []spi.ProviderStats) (release func()) {
	return r.providers.add(list)
}

// UseReferences makes the builder's Registry export, per reference of
// the node (kernel.NewNode calls it: spi.ReferencesUser), how many
// providers it has, 0 when none (airnode_consumer_providers), until
// release is called (at the end of the node's Shutdown).
func (b *Builder) UseReferences(list func() []string) (release func()) {
	return b.reg.AddReferences(list)
}

// AddReferences makes r export, when scraped, airnode_consumer_providers
// for each service key list returns (kernel.Node's ReferenceKeys), with
// the value 0 for a reference with no provider in some state, until
// release is called. list is called on every /metrics request, possibly
// concurrently; it must be cheap and must not block.
func (r *Registry) AddReferences(list func() []string) (release func()) {
	return r.references.add(list)
}

// Provider states, as WriteProviders' STATE column and the state label
// of airnode_consumer_providers name them.
const (
	StateAvailable   = "available"   // the consumer may pick it (warming up included)
	StateUnavailable = "unavailable" // connecting, reconnecting, draining: no usable connection, ejected or not
	StateWeightZero  = "weight0"     // connected, and its entry has weight 0 (-p weight=0): no balancer picks it
	StateEjected     = "ejected"     // connected, and outlier detection keeps it out of the picks
)

// ProviderStates is the providers of each referenced service by state:
// service key → StateAvailable, StateUnavailable, StateWeightZero,
// StateEjected → count. Every service some node using r refers to is
// there, its four counts 0
// when the registry lists no provider of it.
func (r *Registry) ProviderStates() map[string]map[string]int {
	out := map[string]map[string]int{}
	add := func(service string) map[string]int {
		m := out[service]
		if m == nil {
			m = map[string]int{StateAvailable: 0, StateUnavailable: 0, StateWeightZero: 0, StateEjected: 0}
			out[service] = m
		}
		return m
	}
	for _, l := range r.references.all() {
		for _, service := range l() {
			add(service)
		}
	}
	for _, p := range r.Providers() {
		add(p.Service)[p.State()]++
	}
	return out
}

// State is the provider's state, the one answer the table's STATE
// (WriteProviders), airnode_consumer_providers{state} (ProviderStates)
// and /stats' "state" give: the connection wins, so a provider with no
// usable connection is StateUnavailable whether or not it is ejected (a
// black-holed provider ejected for its timeouts, then closed by the
// liveness check, is being redialled: tester76 #1); StateWeightZero is
// a connected provider whose entry has weight 0 (taken out of rotation
// with -p weight=0: no balancer picks it, ejected or not, so it is not
// available: tester92 #1); StateEjected is a connected provider outlier
// detection keeps out of the picks; StateAvailable one a reference may
// pick (one warming up, its weight above 0, included). A row from a node
// that predates Connected (its JSON lacks "connected") counts as
// connected when it is Available.
func (p ProviderStats) State() string {
	switch {
	case !p.Connected && !p.Available:
		return StateUnavailable
	case p.WeightZero:
		return StateWeightZero
	case p.Ejected:
		return StateEjected
	case p.Available:
		return StateAvailable
	}
	return StateUnavailable
}

// Providers returns the registry's per-provider rows, sorted by service,
// then provider; nil when no node using it has references.
func (r *Registry) Providers() []ProviderStats {
	lists := r.providers.all()
	now := r.weigher.Now()
	type key struct{ service, provider string }
	rows := map[key]*ProviderStats{}
	means := map[key][2]float64{} // summed mean × calls, calls: the mean over every entry's window
	for _, l := range lists {
		for _, p := range l() {
			k := key{p.Service, p.Provider}
			row := rows[k]
			if row == nil {
				row = &ProviderStats{Service: p.Service, Provider: p.Provider}
				rows[k] = row
			}
			row.Calls += p.Stats.Total
			row.Failures += p.Stats.Failed
			for st, n := range p.FailuresByStatus {
				if row.FailuresByStatus == nil {
					row.FailuresByStatus = map[string]int64{}
				}
				row.FailuresByStatus[st.String()] += n
			}
			row.InFlight += p.Stats.Active
			row.Available = row.Available || p.Available
			row.Connected = row.Connected || p.Connected
			row.Ejected = row.Ejected || p.Ejected
			row.WeightZero = row.WeightZero || p.WeightZero
			if p.Invoker != nil {
				// one URL per provider address and service: the highest, should two references see two
				weight, eff, left := r.weigher.Progress(p.Invoker, now)
				row.Weight, row.EffectiveWeight = max(row.Weight, weight), max(row.EffectiveWeight, eff)
				row.WarmupLeftSec = max(row.WarmupLeftSec, float64(left)/1000)
			}
			if n := p.Stats.MeanCount; n > 0 {
				m := means[k]
				means[k] = [2]float64{m[0] + float64(p.Stats.MeanResponse)*float64(n), m[1] + float64(n)}
			}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	out := make([]ProviderStats, 0, len(rows))
	for k, row := range rows {
		if m := means[k]; m[1] > 0 {
			row.MeanMillis = m[0] / m[1] / float64(time.Millisecond)
		}
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b ProviderStats) int {
		return cmp.Or(strings.Compare(a.Service, b.Service), strings.Compare(a.Provider, b.Provider))
	})
	return out
}

// providerCollector exports Providers as the airnode_consumer_provider_*
// families, read when scraped: the calls record nothing for them. A
// provider that leaves the directory leaves the families.
type providerCollector struct{ r *Registry }

// Describe sends the nine descriptors.
func (c providerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{providerCallsDesc, providerFailuresDesc, providerInFlightDesc,
		providerMeanDesc, providerAvailableDesc, providerEjectedDesc, providerWeightDesc, providerWarmupDesc, providersDesc} {
		ch <- d
	}
}

// Collect sends the metrics of every provider, and the count of each
// reference's providers by state.
func (c providerCollector) Collect(ch chan<- prometheus.Metric) {
	for service, states := range c.r.ProviderStates() {
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(providersDesc, prometheus.GaugeValue, float64(n), service, state)
		}
	}
	for _, p := range c.r.Providers() {
		lv := []string{p.Service, p.Provider}
		ch <- prometheus.MustNewConstMetric(providerCallsDesc, prometheus.CounterValue, float64(p.Calls), lv...)
		for st, n := range p.FailuresByStatus {
			ch <- prometheus.MustNewConstMetric(providerFailuresDesc, prometheus.CounterValue, float64(n), p.Service, p.Provider, st)
		}
		ch <- prometheus.MustNewConstMetric(providerInFlightDesc, prometheus.GaugeValue, float64(p.InFlight), lv...)
		if p.MeanMillis > 0 {
			ch <- prometheus.MustNewConstMetric(providerMeanDesc, prometheus.GaugeValue, p.MeanMillis/1000, lv...)
		}
		ch <- prometheus.MustNewConstMetric(providerAvailableDesc, prometheus.GaugeValue, boolValue(p.Available), lv...)
		ch <- prometheus.MustNewConstMetric(providerEjectedDesc, prometheus.GaugeValue, boolValue(p.Ejected), lv...)
		ch <- prometheus.MustNewConstMetric(providerWeightDesc, prometheus.GaugeValue, float64(p.EffectiveWeight), lv...)
		ch <- prometheus.MustNewConstMetric(providerWarmupDesc, prometheus.GaugeValue, p.WarmupLeftSec, lv...)
	}
}

// WriteProviders prints, when rows holds any (a consumer node), one line
// per provider of each referenced service, under the method table:
//
//	SERVICE    PROVIDER         CALLS  FAILURES  FAILED   IN-FLIGHT  MEAN/30s  STATE      WEIGHT  WARM-UP  BY-STATUS
//	demo.Echo  127.0.0.1:20880  1200   0         0.00%    0          0.061ms   available  49/100  15s
//	demo.Echo  127.0.0.1:20881  614    614       100.00%  0          -         ejected    100     -        SERVER_THREADPOOL_EXHAUSTED=17,SERVER_TIMEOUT=597
//
// CALLS and FAILURES are since the provider entered the directory;
// FAILED is their ratio ("-" before the first call; "0.00%" only when
// none failed, "<0.01%" when a few of many did); MEAN/30s the mean of
// the successful calls over the last 30 s ("-" when none); STATE is
// State: available (warming up included), weight0 (connected, its entry
// has weight 0: no balancer picks it), ejected (connected, outlier
// detection keeps it out) or unavailable (connecting, reconnecting,
// draining; ejected or weight 0 or not); WEIGHT the weight the balancers
// pick it with now (EffectiveWeight), "49/100" with its configured weight
// while it warms up, "-" in a row from a node that predates it; WARM-UP
// the warm-up left ("15s", "9m59s"; "-" once warm or with none);
// BY-STATUS splits FAILURES by status name, sorted by name.
func WriteProviders(w io.Writer, rows []ProviderStats) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tPROVIDER\tCALLS\tFAILURES\tFAILED\tIN-FLIGHT\tMEAN/30s\tSTATE\tWEIGHT\tWARM-UP\tBY-STATUS")
	for _, p := range rows {
		failed, mean := "-", "-"
		if p.Calls > 0 {
			failed = share(p.Failures, p.Calls)
		}
		if p.MeanMillis > 0 {
			mean = fmt.Sprintf("%.3fms", p.MeanMillis)
		}
		weight, left := "-", "-"
		switch {
		case p.EffectiveWeight < p.Weight:
			weight = fmt.Sprintf("%d/%d", p.EffectiveWeight, p.Weight)
		case p.Weight > 0 || p.WeightZero:
			weight = strconv.FormatInt(p.EffectiveWeight, 10)
		}
		if p.WarmupLeftSec > 0 {
			left = (time.Duration(p.WarmupLeftSec * float64(time.Second))).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Service, p.Provider, p.Calls, p.Failures, failed, p.InFlight, mean, p.State(),
			weight, left, byStatus(p.FailuresByStatus))
	}
	return tw.Flush()
}

// byStatus is counts as "NAME=N" joined by commas, sorted by name (the
// tables' failures by status).
func byStatus(counts map[string]int64) string {
	fails := make([]string, 0, len(counts))
	for name, n := range counts {
		fails = append(fails, name+"="+strconv.FormatInt(n, 10))
	}
	slices.Sort(fails)
	return strings.Join(fails, ",")
}

var (
	_ spi.ProviderStatsUser = (*Builder)(nil)
	_ spi.ReferencesUser    = (*Builder)(nil)
	_ prometheus.Collector  = providerCollector{}
)

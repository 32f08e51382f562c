package metrics

import "github.com/prometheus/client_golang/prometheus"

// seriesLabels are the labels of every call family, in this order.
var seriesLabels = []string{"side", "service", "method"}

// The call families callCollector exports; names, help and labels are
// those of the CounterVec, GaugeVec and HistogramVec they replace, so the
// exposition is the same.
var (
	callsDesc = prometheus.NewDesc("airnode_calls_total",
		"Calls completed, by side, service key and method.", seriesLabels, nil)
	inFlightDesc = prometheus.NewDesc("airnode_calls_in_flight",
		"Calls started and not yet completed.", seriesLabels, nil)
	latencyDesc = prometheus.NewDesc("airnode_call_duration_seconds",
		"Call latency in seconds, as the filter saw it.", seriesLabels, nil)
)

// callCollector exports the registry's series as airnode_calls_total
// (counter), airnode_calls_in_flight (gauge) and
// airnode_call_duration_seconds (histogram over LatencyBuckets), reading
// each series under its lock, so a scrape sees count, sum and buckets of
// the same set of calls.
type callCollector struct{ r *Registry }

// Describe sends the three descriptors.
func (c callCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- callsDesc
	ch <- inFlightDesc
	ch <- latencyDesc
}

// Collect sends the three metrics of every series.
func (c callCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.series.Range(func(_, v any) bool {
		s := v.(*series)
		lv := []string{string(s.key.side), s.key.service, s.key.method}
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.active.Load()), lv...)
		buckets := make(map[float64]uint64, len(c.r.bounds))
		s.mu.Lock()
		count, secs := uint64(s.count), s.seconds
		var cum uint64
		for i, n := range s.buckets {
			cum += n
			buckets[c.r.bounds[i]] = cum
		}
		s.mu.Unlock()
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(callsDesc, prometheus.CounterValue, float64(count), s.created, lv...)
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(latencyDesc, count, secs, buckets, s.created, lv...)
		return true
	})
}

var _ prometheus.Collector = callCollector{}

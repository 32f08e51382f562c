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
	cancelledDesc = prometheus.NewDesc("airnode_calls_cancelled_total",
		"Calls completed that failed while their context was cancelled, not timed out (on the provider: mostly the consumer went away); in airnode_calls_total, not in airnode_call_failures_total.", seriesLabels, nil)
	inFlightDesc = prometheus.NewDesc("airnode_calls_in_flight",
		"Calls started and not yet completed.", seriesLabels, nil)
	latencyDesc = prometheus.NewDesc("airnode_call_duration_seconds",
		"Call latency in seconds, as the filter saw it.", seriesLabels, nil)
)

// callCollector exports the registry's series as airnode_calls_total
// and airnode_calls_cancelled_total (counters), airnode_calls_in_flight
// (gauge) and
// airnode_call_duration_seconds (histogram over LatencyBuckets), reading
// each series under its lock, so a scrape sees count, sum and buckets of
// the same set of calls.
type callCollector struct{ r *Registry }

// Describe sends the four descriptors.
func (c callCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- callsDesc
	ch <- cancelledDesc
	ch <- inFlightDesc
	ch <- latencyDesc
}

// Collect sends the four metrics of every series.
func (c callCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.series.Range(func(_, v any) bool {
		s := v.(*series)
		lv := []string{string(s.key.side), s.key.service, s.key.method}
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.active.Load()), lv...)
		buckets := make(map[float64]uint64, len(c.r.bounds))
		s.mu.Lock()
		count, canceled, secs := uint64(s.count), s.canceled, s.seconds
		var cum uint64
		for i, n := range s.buckets {
			cum += n
			buckets[c.r.bounds[i]] = cum
		}
		s.mu.Unlock()
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(callsDesc, prometheus.CounterValue, float64(count), s.created, lv...)
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(cancelledDesc, prometheus.CounterValue, float64(canceled), s.created, lv...)
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(latencyDesc, count, secs, buckets, s.created, lv...)
		return true
	})
}

var _ prometheus.Collector = callCollector{}

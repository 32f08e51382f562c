package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// processCollector is client_golang's process collector without
// process_network_receive_bytes_total and
// process_network_transmit_bytes_total: on Linux it reads them from
// /proc/self/net/dev, which counts the whole network namespace's traffic
// (every process on a host without one of its own), not this process's
// (5.9e10 bytes on a fresh provider: the host's
// total). client_golang v1.25 has no option to leave them out, so this
// wrapper drops their descriptors and samples. Safe for concurrent use.
type processCollector struct{ c prometheus.Collector }

// newProcessCollector returns the process collector the registry serves.
func newProcessCollector() processCollector {
	return processCollector{collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
}

// namespaceWide reports whether d is one of the series left out.
func namespaceWide(d *prometheus.Desc) bool {
	s := d.String()
	return strings.HasPrefix(s, `Desc{fqName: "process_network_receive_bytes_total"`) ||
		strings.HasPrefix(s, `Desc{fqName: "process_network_transmit_bytes_total"`)
}

// Describe implements prometheus.Collector.
func (p processCollector) Describe(ch chan<- *prometheus.Desc) {
	all := make(chan *prometheus.Desc)
	go func() { p.c.Describe(all); close(all) }()
	for d := range all {
		if !namespaceWide(d) {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector.
func (p processCollector) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { p.c.Collect(all); close(all) }()
	for m := range all {
		if !namespaceWide(m.Desc()) {
			ch <- m
		}
	}
}

var _ prometheus.Collector = processCollector{}

package counters

import (
	"slices"
	"strings"
	"sync"
)

// ServingCounters are the consumer connections this process's providers
// serve now, per transport name ("smux", "tcp", a plugin's), which
// package extensions/filter/metrics exports as
// airnode_provider_connections{transport}: one Gauge per transport,
// made when the first server of the transport starts (so a provider
// with no consumer yet reads 0) and kept for the life of the process.
// The kernel's exchange servers move it when a connection's channel
// starts and when it has finished (kernel/exchange Options.Connections),
// never on a call. For and Each are safe for concurrent use; For takes
// no lock once the transport has its gauge.
type ServingCounters struct {
	m sync.Map // transport name -> *Gauge
}

// ProviderConnections holds the process's provider connection gauges.
var ProviderConnections ServingCounters

// For returns the gauge of transport, making it at its first call.
func (c *ServingCounters) For(transport string) *Gauge {
	if g, ok := c.m.Load(transport); ok {
		return g.(*Gauge)
	}
	g, _ := c.m.LoadOrStore(transport, new(Gauge))
	return g.(*Gauge)
}

// Each calls f for every transport that has a gauge, sorted by name.
func (c *ServingCounters) Each(f func(transport string, g *Gauge)) {
	type entry struct {
		name string
		g    *Gauge
	}
	var list []entry
	c.m.Range(func(k, v any) bool {
		list = append(list, entry{k.(string), v.(*Gauge)})
		return true
	})
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range list {
		f(e.name, e.g)
	}
}

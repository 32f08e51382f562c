package counters

import (
	"slices"
	"strings"
	"sync"
)

// RetryCounters counts the failover cluster's retries per reference
// service key ("group/path:version"), which package
// extensions/filter/metrics exports as
// airnode_consumer_retries_total{service,outcome}. A service key has
// counters from its first retry on (a reference that never retried has
// none) for the life of the process; there are as many as the process's
// references have distinct service keys. For and Each are safe for
// concurrent use; For takes no lock once the key has its counters.
type RetryCounters struct {
	m sync.Map // service key -> *Retries
}

// Retries are one service key's retry counters.
type Retries struct {
	// Made counts retries sent to a provider: attempts after a call's
	// first.
	Made Counter
	// BudgetRefused counts retries the reference's retry budget
	// (retry.tokens) refused, one per call that ended so: the call failed
	// with its last attempt's status instead.
	BudgetRefused Counter
}

// Retry holds the process's retry counters.
var Retry RetryCounters

// For returns the counters of service key service, making them at its
// first call.
func (c *RetryCounters) For(service string) *Retries {
	if r, ok := c.m.Load(service); ok {
		return r.(*Retries)
	}
	r, _ := c.m.LoadOrStore(service, new(Retries))
	return r.(*Retries)
}

// Each calls f for every service key that has counters, sorted by key.
func (c *RetryCounters) Each(f func(service string, r *Retries)) {
	type entry struct {
		service string
		r       *Retries
	}
	var list []entry
	c.m.Range(func(k, v any) bool {
		list = append(list, entry{k.(string), v.(*Retries)})
		return true
	})
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.service, b.service) })
	for _, e := range list {
		f(e.service, e.r)
	}
}

package spi

// ProviderStats is what a consumer node sees of one provider of one of its
// references, read at one instant from what the kernel already counts for
// every call (the provider invoker's Stats): nothing is recorded for it.
type ProviderStats struct {
	// Service is the reference's service key (group/interface:version),
	// the service label of the consumer's call series.
	Service string
	// Provider is the provider's address, host:port.
	Provider string
	// Stats are the provider invoker's Stats since the invoker was made
	// (a provider that leaves the directory and comes back starts from
	// 0): calls in flight, finished and failed calls, one per provider
	// call (a failover retry counts on each provider it tried), and the
	// mean of the successful ones over the last slide period
	// (DefaultSlidePeriod, 30 s).
	Stats StatsSnapshot
	// FailuresByStatus splits Stats.Failed by the status each failed call
	// ended with (SERVER_TIMEOUT, SERVER_THREADPOOL_EXHAUSTED,
	// CHANNEL_INACTIVE ...); nil when none failed, or when the kernel
	// does not know (an invoker it did not make).
	FailuresByStatus map[Status]int64
	// Available reports whether the reference may pick the provider now:
	// connected, not draining, not ejected, and its configured weight
	// above 0 (one warming up, whose weight grows from 1, is available).
	Available bool
	// Connected reports whether one of the provider's connections can
	// take calls (up, answered its first ping, not draining), ejected or
	// not: false while it connects or reconnects. A provider not
	// connected is unavailable whatever its ejection.
	Connected bool
	// Ejected reports whether outlier detection has taken the provider
	// out of the reference's picks for a while (the kernel's
	// outlier.consecutive: its calls kept failing).
	Ejected bool
	// WeightZero reports whether the provider's registry entry has
	// weight 0 (serve -p weight=0: taken out of rotation while it stays
	// listed): no balancer picks it, so it is not Available, connected or
	// not; calls by address still reach it.
	WeightZero bool
	// Invoker is the provider invoker the reference's balancers pick
	// from (the directory's, filters included), for a reader that works
	// out what they pick it with when it reads the row: the metrics
	// filter's effective weight and warm-up left, from its URL's weight,
	// warmup and timestamp keys (extensions/lb/warmup, the balancers'
	// Weigher). Readers must not invoke it. nil when the kernel did not
	// give it.
	Invoker Invoker
}

// ProviderStatsUser is the optional interface of a FilterBuilder that
// reports what the node's consumer sees of each provider (the bundled
// metrics filter exports it when scraped). kernel.NewNode calls
// UseProviderStats once on every filter builder of its catalogs that
// implements it (a catalog wrapper hides it unless it forwards it), with
// list, which returns one ProviderStats per provider invoker of the
// node's references, in no particular order: the directory's providers,
// so their number is bounded by what the registry lists. list is safe
// for concurrent use, takes short locks only, does no I/O and returns nil
// once the node has shut down. The kernel calls the returned release,
// when not nil, once at the end of the node's Shutdown, so that a builder
// shared by several nodes stops reading one that is gone.
type ProviderStatsUser interface {
	UseProviderStats(list func() []ProviderStats) (release func())
}

// ReferencesUser is the optional interface of a FilterBuilder that
// reports how many providers each reference of the node's consumer has
// (the bundled metrics filter's airnode_consumer_providers): with
// ProviderStats alone a reference whose providers have all left has no
// row, where an alert wants a 0. kernel.NewNode calls UseReferences once
// on every filter builder of its catalogs that implements it, with list,
// which returns the service key (group/interface:version, the Service
// of ProviderStats) of each open reference of the node, in no particular
// order, one per reference (two references of one key give it twice).
// list is safe for concurrent use, takes a short lock only, does no I/O
// and returns nil once the node has shut down. The kernel calls the
// returned release, when not nil, once at the end of the node's
// Shutdown.
type ReferencesUser interface {
	UseReferences(list func() []string) (release func())
}

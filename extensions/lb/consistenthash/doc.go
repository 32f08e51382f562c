// Package consistenthash is the "consistenthash" load balancer: a hash ring
// of virtual nodes keyed by the sorted set of provider addresses, so that a
// call's chosen arguments always map to the same provider while membership
// is unchanged and a joining provider takes keys only for itself.
//
//	key             type         unit  default  bounds
//	hash.nodes      int          -     160      1..65536 virtual nodes per provider
//	hash.arguments  int list     -     0        comma-separated argument indexes, each >= 0, each once
//
// Both keys may be set per method ("methods.<m>.hash.nodes"). An index past
// a call's arguments is skipped, as Dubbo's; when hash.arguments names none
// of a call's arguments, or the method takes none (Info), every such call
// hashes alike (one provider takes them all), and the first of each method
// is logged as a warning. An index given twice (0,0) fails Build. Weights and
// warm-up do not apply, except that a provider with weight 0 is left out of
// the ring. Reordering the list or restarting a provider at the same address
// changes nothing; a provider leaving moves only its own keys. Select is safe
// for concurrent use and does not allocate while the list is unchanged; the
// ring (hash.nodes points per address, FNV-1a + MurmurHash3 finalizer where
// Dubbo uses MD5) is rebuilt, under a lock, only when a new address joins or
// more than half of its addresses are gone: a list missing some addresses,
// like a failover retry's, is served from the same ring by skipping their
// points. The balancer is a spi.AffinityLoadBalance: a fresh reference's
// first calls wait until every listed provider's first connection attempt
// has ended, so that every consumer process hashes over the same providers
// from its first call (Dubbo connects every provider at refer).
package consistenthash

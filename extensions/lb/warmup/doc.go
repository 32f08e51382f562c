// Package warmup computes a provider's effective weight for the load
// balancers (every bundled one except consistenthash): the configured
// weight, reduced linearly while the provider warms up.
//
// It reads three provider-owned keys of an invoker's URL (they survive
// spi.MergeURL unchanged):
//
//	key        type      unit               default  bounds
//	weight     int       -                  100      0..2147483647 (larger is clamped); 0 = never picked
//	warmup     duration  Go syntax or ms    10m      >= 0; 0 disables warm-up
//	timestamp  int       ms since the epoch absent   > 0; absent = warm (full weight)
//
// An invoker that implements spi.ProviderStart (the kernel's: the
// provider's hello on each connection) may say its process started later
// than timestamp (restarted on the address of an entry the registry could
// not update): the warm-up then counts from that start (Weigher.WeightOf).
//
// The keys are read at service level only (a provider's weight is per
// provider, as the registry publishes it). Malformed values, which
// export-time validation rejects at the provider, are logged once and
// replaced by the default.
//
// A Weigher computes the weight from a URL; a Cache remembers the parsed keys
// of the last invoker list a balancer saw and its effective weights with
// their prefix sums, so that an unchanged list is weighed without reading
// URLs or computing a weight: the weights are computed again only at the
// next millisecond a warming provider's weight changes (exactly the
// formula's weights at every instant), never once all are warm; View.Pick
// finds a weighted pick by binary search. Both are safe for concurrent
// use, never block on the hot path and do not allocate there (a Cache
// allocates once per list change, and once per weight change while a
// provider warms up).
package warmup

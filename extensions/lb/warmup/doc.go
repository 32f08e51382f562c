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
// The keys are read at service level only (a provider's weight is per
// provider, as the registry publishes it). Malformed values, which
// export-time validation rejects at the provider, are logged once and
// replaced by the default.
//
// A Weigher computes the weight from a URL; a Cache remembers the parsed keys
// of the last invoker list a balancer saw, so that an unchanged list is
// weighed without reading URLs. Both are safe for concurrent use, never
// block on the hot path and do not allocate there (a Cache allocates once
// per list change).
package warmup

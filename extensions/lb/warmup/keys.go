package warmup

import "github.com/airnode/airnode/spi"

// Keys describes the provider keys a Weigher reads, for the balancers
// that weigh providers with this package to declare (spi.KeyDescriber).
// They are read from each provider's URL at Select, not checked by the
// balancer's Build: export-time validation checks them at the provider.
func Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		WeightKey(),
		{Key: KeyWarmup, Type: spi.KeyTypeDuration, Default: "10m", Doc: "provider's warm-up period: its weight grows linearly from 1 over it, >= 0; 0 disables warm-up"},
		{Key: KeyTimestamp, Type: spi.KeyTypeInt, Doc: "provider's start time, ms since the epoch, set at export; absent: warm (full weight)"},
	}
}

// TieBreakKeys is Keys for a balancer that uses weights only to break
// ties between providers it ranks equal (leastactive, shortestresponse, as
// Dubbo's): each Doc says so, since under concurrent callers a cold
// provider with few calls in flight gets a full share at once.
func TieBreakKeys() []spi.KeyDoc {
	ks := Keys()
	for i := range ks {
		ks[i].Doc += "; this balancer weighs providers only to break ties"
	}
	return ks
}

// WeightKey describes the provider key "weight" alone, for a balancer
// that reads the weight but not the warm-up (consistenthash).
func WeightKey() spi.KeyDoc {
	return spi.KeyDoc{Key: KeyWeight, Type: spi.KeyTypeInt, Default: "100", Doc: "provider weight, 0..2147483647 (larger is clamped); 0: never picked"}
}

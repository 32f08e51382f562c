package spi

import "strings"

// Provider-owned keys: after a merge they always keep the provider's value
// (or stay absent), whatever the consumer asked for. DESIGN §3.
var providerKeys = []string{"timestamp", "weight", "warmup", KeyMethods, KeyGroup, KeyVersion, "token"}

// KeyFilter is the filter list key; merged by concatenation, not override.
const KeyFilter = "filter"

// MergeURL merges a provider URL (from the registry) with the consumer's
// reference URL the way Dubbo's ClusterUtils.mergeUrl does: the provider URL
// is the base (its scheme, address and path), the consumer's parameters win,
// except the provider-owned keys timestamp, weight, warmup, methods, group,
// version and token, which stay the provider's. The filter lists of both sides
// are concatenated, provider's first, unless they are the same list.
func MergeURL(provider, consumer URL) URL {
	merged := make(map[string]string, len(provider.params)+len(consumer.params))
	for k, v := range provider.params {
		merged[k] = v
	}
	for k, v := range consumer.params {
		merged[k] = v
	}
	for _, k := range providerKeys {
		if v, ok := provider.params[k]; ok {
			merged[k] = v
		} else {
			delete(merged, k)
		}
	}
	pf, cf := provider.params[KeyFilter], consumer.params[KeyFilter]
	switch {
	case pf != "" && cf != "" && pf != cf: // the same list twice (a direct URL merged with itself) stays one
		merged[KeyFilter] = strings.TrimSuffix(pf, ",") + "," + cf
	case pf != "":
		merged[KeyFilter] = pf
	}
	provider.params = merged
	if len(merged) == 0 {
		provider.params = nil
	}
	return provider
}

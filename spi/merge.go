package spi

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Provider-owned keys: after a merge they always keep the provider's value
// (or stay absent), whatever the consumer asked for.
var providerKeys = []string{"timestamp", "weight", "warmup", KeyMethods, KeyGroup, KeyVersion, "token"}

// KeyFilter is the filter list key; merged by concatenation, not override.
const KeyFilter = "filter"

// MergeURL merges a provider URL (from the registry) with the consumer's
// reference URL the way Dubbo's ClusterUtils.mergeUrl does: the provider URL
// is the base (its scheme, address and path), the consumer's parameters win,
// except the provider-owned keys timestamp, weight, warmup, methods, group,
// version and token, which stay the provider's. The filter lists of both sides
// are concatenated, provider's first, unless they are the same list.
//
// A method-level key is one key whichever of its two spellings either side
// used: a consumer's "methods.M.K" or Dubbo's "M.K" (M in the provider's
// "methods", or an exported Go method name when it lists none, as
// MethodParam reads it) removes the provider's value of the other spelling,
// so the consumer's value wins (a consumer's Sleep.timeout=2s beats a
// provider's methods.Sleep.timeout=200ms). Provider-owned keys are not
// method-level keys and are left as they are.
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
	methods := provider.Methods()
	for k := range consumer.params {
		m, key, ok := methodLevelKey(k, methods)
		if !ok || slices.Contains(providerKeys, key) {
			continue
		}
		for _, other := range []string{"methods." + m + "." + key, m + "." + key} {
			if _, mine := consumer.params[other]; !mine {
				delete(merged, other)
			}
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

// methodLevelKey splits k into method and key when MethodParam reads it as
// a method-level key of a URL listing methods: "methods.<m>.<key>", or
// Dubbo's "<m>.<key>" for m in methods, or for an exported Go method name
// (upper case first letter) when methods is empty.
func methodLevelKey(k string, methods []string) (method, key string, ok bool) {
	if rest, ok := strings.CutPrefix(k, KeyMethods+"."); ok {
		m, key, ok := strings.Cut(rest, ".")
		return m, key, ok && m != "" && key != ""
	}
	m, key, ok := strings.Cut(k, ".")
	if !ok || m == "" || key == "" {
		return "", "", false
	}
	if slices.Contains(methods, m) {
		return m, key, true
	}
	r, _ := utf8.DecodeRuneInString(m)
	return m, key, len(methods) == 0 && unicode.IsUpper(r)
}

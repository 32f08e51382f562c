package kernel

import (
	"slices"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// checkMethodValues returns an error for each method-level form of a
// typed kernel key (config.KernelKeys: timeout, retries, actives,
// executes, hash.arguments, hash.nodes, ...) in u whose value is
// malformed or out of bounds, naming the key as written
// (`invalid value "abc" for URL key "methods.Echo.retries": want ...`),
// joined; nil when there is none. Refer and Export call it, so that such
// a key fails there rather than every call of the method (tester71 #4).
// Left out: keys for a method u's "methods" list lacks (they set
// nothing; Refer warns of them), and the keys a method-level form has no
// effect on (MethodKeyNoEffect: weight, the connection keys; Refer warns
// of those, and ProviderKeysOnReference checks weight, warmup and
// timestamp), and the keys as written in skip: on a reference, the keys
// only providers read (providerSideKeys: methods.Echo.executes=-1), which
// a reference ignores with a warning naming a malformed value, as it
// does their service-level form; nil for a provider URL.
func checkMethodValues(u spi.URL, skip []string) error {
	methods := u.Methods()
	set := map[string]string{}
	for _, k := range u.Keys() {
		m, key, ok := spi.MethodLevelKey(k, methods)
		if !ok || len(methods) > 0 && !slices.Contains(methods, m) || MethodKeyNoEffect(key) != "" || slices.Contains(skip, k) {
			continue
		}
		set[k], _ = u.Param(k)
	}
	if len(set) == 0 {
		return nil
	}
	if len(methods) > 0 {
		set[spi.KeyMethods] = u.ParamOr(spi.KeyMethods, "")
	}
	return config.CheckParams(set)
}

// methodKeysNoEffect returns, for each method-level key of u whose key
// cannot be set per method (MethodKeyNoEffect: transport, heartbeat,
// connect.timeout, payload, tls, token, filter; "methods.Echo.transport",
// Dubbo's "Echo.heartbeat"), the triple [key as written, why, value], in
// u's key order. weight, warmup and timestamp are left to
// ProviderKeysOnReference, which says more. Refer warns of each.
func methodKeysNoEffect(u spi.URL) [][3]string {
	methods := u.Methods()
	var out [][3]string
	for _, k := range u.Keys() {
		_, key, ok := spi.MethodLevelKey(k, methods)
		if !ok || slices.Contains(providerOwnedKeys, key) {
			continue
		}
		if why := MethodKeyNoEffect(key); why != "" {
			v, _ := u.Param(k)
			out = append(out, [3]string{k, why, v})
		}
	}
	return out
}

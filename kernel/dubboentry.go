package kernel

import (
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/spi"
)

// registryEntry returns u as a registry entry is published (a provider's
// at Export, a consumer's at Refer): every value written in Dubbo's form,
// so that Dubbo (2.7, 3) and dubbo-go consumers and Dubbo Admin, which
// read these keys with URL.getParameter(key, int) or
// getMethodParameter, can parse them (tester71). By the type the kernel
// (KernelKeyDocs) and the extensions of its catalogs (spi.KeyDescriber)
// declare for each key, at service level and in its method-level forms
// ("methods.Echo.timeout", Dubbo's "Echo.timeout"):
//
//   - a duration becomes an integer of milliseconds ("10s" -> "10000",
//     "10m" -> "600000"), Dubbo's unit for timeout, warmup,
//     connect.timeout, heartbeat.timeout; one that is not a whole number
//     of milliseconds ("1500us") stays as written, since a rounded value
//     would change what airnode consumers use;
//   - a byte size becomes an integer of bytes ("8MiB" -> "8388608"),
//     Dubbo's payload;
//   - a bool becomes "true" or "false" (Dubbo's Boolean.parseBoolean
//     reads "1" or "T" as false);
//   - "heartbeat" naming the heartbeat point's default strategy ("idle")
//     is left out: in Dubbo "heartbeat" is an integer interval in ms, and
//     absent it means the default in both (a number here would conflict
//     with a consumer's own heartbeat.interval, extension.Point.Normalize).
//
// Method-level keys are published in Dubbo's spelling: airnode's
// "methods.Echo.timeout=300" becomes "Echo.timeout=300", which Dubbo 2.7
// consumers and Dubbo Admin read (URL.getMethodParameter), when "Echo"
// reads back as the method (spi.MethodLevelKey: one of u's "methods", or
// an exported Go method name when u lists none) and "Echo.timeout" is no
// declared key (dubboMethodKey); "methods.M.K" wins over "M.K" as in
// MethodParam. An entry without "application" gets DefaultApplication()
// (tester74): Dubbo Admin groups services by application.
//
// airnode reads all these forms (bare milliseconds, bare bytes, both
// spellings of a method's key), so an airnode consumer's effective
// settings are those of u. A value that
// does not parse is left as it is (Export has refused it before). Keys
// of no declared type, or declared with different types by two
// extensions, are left as they are.
func (n *Node) registryEntry(u spi.URL) spi.URL {
	u = withApplication(u)
	types := n.keyTypes()
	methods := u.Methods()
	set := map[string]string{}
	var drop []string
	for _, k := range u.Keys() {
		v, _ := u.Param(k)
		t, ok := types[k]
		if !ok {
			if _, key, mok := spi.MethodLevelKey(k, methods); mok {
				t = types[key]
			}
		}
		if w, ok := dubboValue(t, v); ok && w != v {
			set[k] = w
		}
	}
	for _, k := range u.Keys() {
		if dk, ok := dubboMethodKey(k, methods, types); ok {
			v, _ := u.Param(k)
			if w, ok := set[k]; ok {
				v = w
			}
			// "methods.M.K" wins over "M.K" (MethodParam), so its
			// value is the one published under Dubbo's spelling
			set[dk] = v
			delete(set, k)
			drop = append(drop, k)
		}
	}
	if hk := n.cat.Heartbeat.Key(); hk != "" {
		if v, ok := u.Param(hk); ok && v == n.cat.Heartbeat.Default() {
			drop = append(drop, hk)
		}
	}
	if len(set) == 0 && len(drop) == 0 {
		return u
	}
	return u.WithParams(set).Without(drop...)
}

// dubboMethodKey returns Dubbo's spelling "M.K" of the method-level key
// k when k is airnode's "methods.M.K" and "M.K" reads back as method M's
// key K on a URL listing methods (spi.MethodLevelKey: M is one of
// methods, or methods is empty and M an exported Go method name), and
// is no key that the kernel or an extension declares at service level
// (types): Dubbo 2.7 consumers and Dubbo Admin read a method's settings
// only as "M.K" (URL.getMethodParameter), and airnode reads both.
func dubboMethodKey(k string, methods []string, types map[string]string) (string, bool) {
	rest, ok := strings.CutPrefix(k, spi.KeyMethods+".")
	if !ok {
		return "", false
	}
	m, key, ok := spi.MethodLevelKey(rest, methods)
	if !ok || m+"."+key != rest {
		return "", false
	}
	if _, declared := types[rest]; declared {
		return "", false
	}
	return rest, true
}

// dubboValue returns v, of spi.KeyDoc type t, in Dubbo's form (see
// registryEntry), and whether it has one.
func dubboValue(t, v string) (string, bool) {
	switch t {
	case spi.KeyTypeDuration:
		d, err := spi.ParseDuration(v)
		if err != nil || d%time.Millisecond != 0 {
			return "", false
		}
		return strconv.FormatInt(d.Milliseconds(), 10), true
	case spi.KeyTypeSize:
		b, err := spi.ParseSize(v)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(b, 10), true
	case spi.KeyTypeBool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return "", false
		}
		return strconv.FormatBool(b), true
	}
	return "", false
}

// keyTypes maps each URL key the kernel or an extension of its catalogs
// declares to its spi.KeyDoc type; a key declared with two different
// types maps to "" (no conversion is safe).
func (n *Node) keyTypes() map[string]string {
	out := map[string]string{}
	add := func(d spi.KeyDoc) {
		if t, seen := out[d.Key]; seen && t != d.Type {
			out[d.Key] = ""
			return
		}
		out[d.Key] = d.Type
	}
	for _, d := range KernelKeyDocs() {
		add(d)
	}
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, d := range e.Keys {
				add(d)
			}
		}
	}
	return out
}

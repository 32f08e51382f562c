// Package clusterkit holds what the bundled cluster strategies share: the
// "no provider" error, invoker identity and exclusion, and method-level key
// discovery. It allocates only on retry and fork paths.
package clusterkit

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/airnode/airnode/spi"
)

// NoProvider returns the error for a call that found no provider to take
// it: StatusServiceNotFound, naming the service key and the registry.
// detail, when not empty, is appended after a colon.
func NoProvider(inv *spi.Invocation, dir spi.Directory, detail string) *spi.Error {
	key := ""
	if inv != nil {
		key = inv.Service
	}
	if key == "" {
		key = dir.URL().ServiceKey()
	}
	msg := fmt.Sprintf("no provider available for %s (registry: %s)", key, dir.Registry())
	if detail != "" {
		msg += ": " + detail
	}
	return &spi.Error{Status: spi.StatusServiceNotFound, Message: msg}
}

// Same reports whether a and b are the same invoker, without panicking on
// invokers whose dynamic type is not comparable (those are compared by URL).
func Same(a, b spi.Invoker) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if ta == nil || ta.Comparable() {
		return a == b
	}
	return a.URL().Equal(b.URL())
}

// Exclude returns the invokers of list not in used: list itself when used
// is empty, else a new slice, empty when every invoker was used.
func Exclude(list, used []spi.Invoker) []spi.Invoker {
	if len(used) == 0 {
		return list
	}
	out := make([]spi.Invoker, 0, len(list))
	for _, x := range list {
		if !slices.ContainsFunc(used, func(y spi.Invoker) bool { return Same(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// MethodsSetting returns the methods with a method-level value of one of
// keys in u: "methods.<m>.<key>", or "<m>.<key>" for m in "methods".
func MethodsSetting(u spi.URL, keys ...string) []string {
	var out []string
	add := func(m string) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, k := range u.Keys() {
		if rest, ok := strings.CutPrefix(k, "methods."); ok {
			for _, key := range keys {
				if m, ok := strings.CutSuffix(rest, "."+key); ok {
					add(m)
				}
			}
		}
	}
	for _, m := range u.Methods() {
		for _, key := range keys {
			if _, ok := u.Param(m + "." + key); ok {
				add(m)
			}
		}
	}
	return out
}

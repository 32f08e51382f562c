package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// likelyTypos returns, for each key of u that airnode does not read but
// that is one or two edits away from a key it does ("timout"), the pair
// [key, closest known key]. Keys it does not recognise otherwise pass: URLs carry
// keys of plugins and of other tools too. Method-level forms are checked
// by their key: "methods.Echo.timout", and Dubbo's "Echo.timout" for Echo
// in u's "methods" or, when u has none, for an exported method name (the
// rule of perMethod; "heartbeat.retires" is checked whole).
func (n *Node) likelyTypos(u spi.URL) [][2]string {
	known := n.knownKeys()
	methods := u.Methods()
	var out [][2]string
	for _, k := range u.Keys() {
		if slices.Contains(known, k) {
			continue
		}
		key := k
		if rest, ok := strings.CutPrefix(k, "methods."); ok {
			if _, after, ok := strings.Cut(rest, "."); ok {
				key = after
			}
		} else if m, after, ok := strings.Cut(k, "."); ok && (slices.Contains(methods, m) || len(methods) == 0 && exportedName(m)) {
			key = after // Dubbo's "<method>.<key>", as spi.URL.MethodParam reads it
		}
		if slices.Contains(known, key) {
			continue
		}
		if _, after, ok := strings.Cut(key, "."); ok && slices.Contains(known, after) {
			continue // Dubbo's "<method>.<key>"
		}
		if len(key) < 5 {
			continue
		}
		// The closest known key; on a tie the first, so the kernel's own
		// keys win over extensions' ones.
		best, bestD := "", 3
		for _, want := range known {
			if d := extension.EditDistance(key, want); d > 0 && d < bestD {
				best, bestD = want, d
			}
		}
		if best != "" {
			out = append(out, [2]string{k, best})
		}
	}
	return out
}

// knownKeys are the URL keys the kernel reads (its own, config.KernelKeys
// and the key that selects each point) and those every extension of its
// catalogs declares it reads (spi.KeyDescriber, through Describe), so a
// plugin extension's keys count as soon as it is registered.
func (n *Node) knownKeys() []string { return KnownKeys(n.cat) }

// KnownKeys returns the URL keys airnode reads with cat, as the typo
// warnings at Refer and Export count them: KernelKeys, each extension
// point's selecting key, and the keys every extension of cat declares
// (spi.KeyDescriber), as a new slice (with repeats).
func KnownKeys(cat *extension.Catalogs) []string {
	keys := KernelKeys()
	for _, p := range cat.Describe() {
		if p.Key != "" {
			keys = append(keys, p.Key)
		}
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				keys = append(keys, k.Key)
			}
		}
	}
	return keys
}

// KernelKeys returns the URL keys the kernel itself reads: its own
// (methods, side, group, version, token, dispatcher, shutdown.wait...) and
// config.KernelKeys (timeout, retries, weight, payload...), in that order,
// as a new slice. It leaves out the keys that select an extension
// (loadbalance, transport, ...: the catalogs' PointInfo.Key) and those
// extensions declare (spi.KeyDescriber). An extension that declares one of
// these keys shares it with the kernel: a URL's value reaches both.
func KernelKeys() []string {
	keys := []string{spi.KeyMethods, spi.KeySide, spi.KeyGroup, spi.KeyVersion, spi.KeyInterface, spi.KeyBackup, "application", "pid",
		keyDispatcher, keyConnectionConcurrency, keyMinPingInterval, "token", "connections",
		directory.KeyProtocol, "shutdown.timeout", "shutdown.wait"}
	for _, s := range config.KernelKeys {
		keys = append(keys, s.Key)
	}
	return keys
}

// conflictingMethodForms returns an error naming both keys when u writes
// one method-level key both ways with different values:
// "methods.Sleep.timeout=200ms" and Dubbo's "Sleep.timeout=300ms" (the
// first would win, silently). The same value both ways is accepted.
func conflictingMethodForms(u spi.URL) error {
	for _, k := range u.Keys() {
		rest, ok := strings.CutPrefix(k, "methods.")
		if !ok {
			continue
		}
		v, _ := u.Param(k)
		if w, ok := u.Param(rest); ok && w != v && strings.Contains(rest, ".") {
			return fmt.Errorf("URL keys %q=%q and %q=%q set the same method key to different values: give one of them", k, v, rest, w)
		}
	}
	return nil
}

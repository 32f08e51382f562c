package cli

import (
	"fmt"
	"slices"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// sidelessKey says what a filter's activation a does when it names a URL
// key but no side (spi.Activation{Key: "tstamp"}, tester88 #2): the
// kernel activates a filter only on the sides Sides lists
// (extension.ActivateFilters), so the key puts it in no chain and only a
// URL whose filter key names it uses it. name is how a URL selects the
// filter (the declared plugin name; the builder's own name for `airnode
// plugin check`). "" when a lists a side or no key.
func sidelessKey(name string, a spi.Activation) string {
	if len(a.Sides) > 0 || a.Key == "" {
		return ""
	}
	return fmt.Sprintf("filter %q declares the activation key %q but no side (Activation.Sides is empty): the kernel activates it on no side, so %s=VALUE puts it in no chain and only a URL whose filter key names it (filter=%s) uses it; for %q to activate it, its author sets Activation.Sides (spi.Consumer, spi.Provider or both)",
		name, a.Key, a.Key, name, a.Key)
}

// warnSidelessFilters writes a warning (warn), once when the plugins
// start, for each running filter plugin whose activation names a key
// but no side (sidelessKey): a URL with that key does not use it, which
// nothing else says.
func warnSidelessFilters(plugins []pluginhost.PluginInfo, cat *extension.Catalogs, warn warnFunc) {
	for _, i := range plugins {
		if i.Point != extension.PointFilter || i.State != pluginhost.StateRunning {
			continue
		}
		f, err := cat.Filter.Get(i.Name)
		if err != nil {
			continue
		}
		if s := sidelessKey(i.Name, f.Activation()); s != "" {
			warn("filter plugin's activation names a key but no side: it is in no chain unless a URL's filter key names it", "plugin", i.Name, "err", s)
		}
	}
}

// sidelessInURL returns, for the FILTERS rows of `airnode list
// --explain`, why each filter of cat that chain (one side's, at service
// level) leaves out is not in it although u, that side's URL, sets its
// activation key: its activation names no side (sidelessKey). Sorted by
// name; nil when there is none.
func sidelessInURL(cat *extension.Catalogs, u spi.URL, chain []string) []string {
	var out []string
	for _, n := range cat.Filter.Names() {
		f, err := cat.Filter.Get(n)
		if err != nil || slices.Contains(chain, n) {
			continue
		}
		if _, ok := f.(interface{ NotRunning() string }); ok {
			continue // a plugin that never ran: its activation is unknown
		}
		a := f.Activation()
		if sidelessKey(n, a) == "" {
			continue
		}
		v, _, ok := u.MethodParam("", a.Key)
		if !ok && len(u.MethodsSetting(a.Key)) == 0 {
			continue
		}
		if !ok {
			v = "(per method)"
		}
		out = append(out, fmt.Sprintf("%s is not in the chain: key %s=%s does not activate it, its activation names no side (Activation.Sides is empty); filter=%s puts it in",
			n, a.Key, v, n))
	}
	return out
}

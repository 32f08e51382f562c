package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// URLWarning is one key of a reference URL that Refer warns of and
// ignores: the key as written ("retries", "methods.Echo.mock"), its
// value, the kind of warning and why the key does nothing there, in
// words a command can print after "K=V has no effect: ".
type URLWarning struct {
	Key   string // the key as written: "retries", "methods.Echo.mock"
	Value string // its value as written ("***" for kind "token")
	// Kind says which check found it: "unread" (read by nothing of the
	// node, UnreadKeys; Why gives the key meant if one is close), "registry" (a registry's key), "dubbo" (a Dubbo key
	// airnode does not implement), "cluster", "loadbalance" and
	// "heartbeat" (read by another extension of that point than the one
	// chosen), "fromproviders" (a key the chosen balancer reads from
	// provider URLs, spi.KeyDoc.FromProviders: the reference's value
	// overrides every provider's; it has an effect, a surprising one),
	// "provider" (weight, warmup, timestamp: each provider's own),
	// "permethod" (a method-level form of a key chosen per connection or
	// per service, methods.Echo.transport: MethodKeyNoEffect),
	// "servicelevel" (a method-level form of a key an extension reads at
	// service level only, Sleep.retry.tokens: ServiceLevelOnlyWhy),
	// "server" (dispatcher, connection.concurrency,
	// heartbeat.min.ping.interval: the provider's server decides),
	// "node" (shutdown.timeout, shutdown.wait: the node's, which bound
	// its Close whatever its references say) and
	// "token" (a registry reference's own token: the provider's
	// published token is sent; Value is "***", never the token).
	// "providerside" (a key only providers read: executes, accepts,
	// threadlimit's threads; Why follows "KEY is ": "a provider key: it
	// has no effect on a call; set it on the provider (serve URL ...)",
	// naming a malformed value too).
	// "baremillis" (a duration key given as a bare number under
	// spi.BareMillisBelow of its default, "timeout=5": 5ms,
	// "heartbeat.interval=60": 60ms; it has its effect, and Why says
	// "5 is 5ms (...); write 5s for seconds").
	Kind string
	Why  string // "cluster failfast does not read it; failover and forking do"
	// Invalid, for kind "providerside", is why Value is malformed for the
	// key ("want an integer from 0 (no limit) to 1048576"; Why names it
	// too); "" when it is well formed or for another kind. The reference
	// ignores the key either way; list --explain leaves such a key out of
	// the provider side it builds from the URL.
	Invalid string

	msg   string // Refer's log message
	attrs []any  // Refer's log attributes after "service"
}

// Message is Refer's log message for w: for kind "baremillis" the whole
// warning, naming the key as the user wrote it (WithKeySource:
// "AIRNODE_CONSUMER_TIMEOUT=5 is 5ms (...); write 5s for seconds"); for
// the other kinds the words before the record's attributes ("URL key is
// read by another balancer, ...").
func (w URLWarning) Message() string { return w.msg }

// ReferWarnings returns what Refer warns of for reference URL u, in the
// order Refer logs it, and the error Refer refuses u with for a
// malformed weight, warmup or timestamp (ProviderKeysOnReference). Refer
// logs each warning and list --explain prints each, so a warning added
// here reaches both. The method-level keys naming no method of a direct
// reference (CheckMethodNames) are checked apart: list --explain checks
// them against the methods it knows.
func (n *Node) ReferWarnings(u spi.URL) ([]URLWarning, error) {
	var out []URLWarning
	add := func(kind, key, why, msg string, attrs ...any) {
		v, _ := u.Param(key)
		out = append(out, URLWarning{Key: key, Value: v, Kind: kind, Why: why, msg: msg, attrs: append([]any{"key", key}, attrs...)})
	}
	for _, k := range UnreadKeys(n.cat, u) {
		add("unread", k.Key, "it "+k.Words(), "URL key "+UnreadKeyWords+"; ignored", unreadAttrs(k)...)
	}
	for _, t := range n.registryKeysOf(u) {
		add("registry", t[0], fmt.Sprintf("it is a key of the %s registry, read from the registry URL only (--registry, or the config's registry)", strings.ReplaceAll(t[1], ",", ", ")),
			"URL key is a registry's, read from the registry URL only (ignored on a service URL)", "registry", t[1])
	}
	for _, t := range n.unsupportedKeys(u) {
		add("dubbo", t[0], "it is a Dubbo key airnode does not implement; "+t[1],
			"URL key is Dubbo's and airnode does not implement it (ignored)", "instead", t[1])
	}
	for _, t := range n.clusterKeysUnread(u) {
		add("cluster", t[0], unreadWhy("cluster", t),
			"URL key is read by another cluster, not the one this reference uses (ignored)", "cluster", t[1], "read_by", t[2])
	}
	for _, t := range n.balancerKeysUnread(u) {
		add("loadbalance", t[0], unreadWhy("loadbalance", t),
			"URL key is read by another balancer, not the one this reference uses (ignored)", "loadbalance", t[1], "read_by", t[2])
	}
	for _, t := range n.heartbeatKeysUnread(u) {
		add("heartbeat", t[0], unreadWhy("heartbeat", t),
			"URL key is read by another heartbeat strategy, not the one this reference uses (ignored)", "heartbeat", t[1], "read_by", t[2])
	}
	for _, t := range n.fromProvidersOverridden(u) {
		add("fromproviders", t[0], fmt.Sprintf("loadbalance %s reads it from each provider's URL, and a reference's value overrides every provider's; give the consumer's setting a key of its own", t[1]),
			"URL key on a reference overrides every provider's value of it (the balancer reads it from provider URLs)", "loadbalance", t[1])
	}
	for _, t := range n.bareMillis(u, spi.Consumer) {
		add("baremillis", t[0], t[1], t[2])
	}
	keys, err := ProviderKeysOnReference(u)
	if err != nil {
		return out, err
	}
	for _, k := range keys {
		add("provider", k.Key, k.Why, "provider key on a reference has no effect: "+k.Why, "value", k.Value)
	}
	for _, t := range methodKeysNoEffect(u) {
		add("permethod", t[0], t[1], "URL key has no effect per method (ignored)", "value", t[2], "why", t[1])
	}
	// A method-level form of a key read at service level only
	// (spi.KeyDoc.ServiceLevelOnly: Sleep.retry.tokens), unless another
	// cluster's reading it was warned of above (tester81 #2).
	methods, serviceOnly := u.Methods(), n.serviceLevelOnlyKeys()
	for _, k := range u.Keys() {
		_, key, ok := spi.MethodLevelKey(k, methods)
		if !ok || len(serviceOnly[key]) == 0 || slices.ContainsFunc(out, func(w URLWarning) bool { return w.Key == k }) {
			continue
		}
		if why := serviceLevelOnlyWhy(key, serviceOnly[key]); why != "" {
			v, _ := u.Param(k)
			add("servicelevel", k, why, "URL key has no effect per method (ignored)", "value", v, "why", why)
		}
	}
	for _, k := range []string{keyDispatcher, keyConnectionConcurrency, keyMinPingInterval} {
		if v, ok := u.Param(k); ok {
			add("server", k, "the provider's server decides it (serve -p "+k+"=...)",
				"provider key on a reference has no effect: the provider's server decides it", "value", v)
		}
	}
	for _, p := range providerSideKeys(n.cat, u) {
		attrs := []any{"value", p.value}
		if p.invalid != "" {
			attrs = append(attrs, "invalid", p.invalid)
		}
		add("providerside", p.key, providerSideWhy(p),
			"URL key is a provider key: it has no effect on a call; set it on the provider (serve URL)", attrs...)
		out[len(out)-1].Invalid = p.invalid
	}
	for _, k := range nodeShutdownKeys {
		if v, ok := u.Param(k.key); ok {
			why := "it is the node's (" + k.option + ", serve " + k.flag + "; an export's URL key), " + k.what
			add("node", k.key, why, k.key+" has no effect on a reference: "+why, "value", v)
		}
	}
	if _, ok := u.Param(spi.AttachmentToken); ok && u.Host() == "" {
		// Dubbo's semantics (spi.MergeURL): the token is the provider's,
		// published with its URL in the registry; the value is a secret
		// and is never shown.
		out = append(out, URLWarning{Key: spi.AttachmentToken, Value: "***", Kind: "token", Why: tokenWhy,
			msg: "the reference's own token is not used through a registry: each call sends the token its provider publishes (a direct URL sends the reference's)", attrs: []any{"key", spi.AttachmentToken}})
	}
	return out, nil
}

// fromProvidersOverridden returns [key, balancer] for each service-level
// key of reference URL u that the balancer u chooses declares it reads
// from provider URLs (spi.KeyDoc.FromProviders), weight, warmup and
// timestamp aside (ProviderKeysOnReference): a consumer's zone=c beside
// a zone-aware balancer hides each provider's zone (tester64).
func (n *Node) fromProvidersOverridden(u spi.URL) [][2]string {
	used := n.cat.LoadBalance.Choose(u, "").Name
	declared := n.keysFromProviders(extension.PointLoadBalance, used)
	var out [][2]string
	for _, k := range u.Keys() {
		if declared[k] && !slices.Contains(providerOwnedKeys, k) {
			out = append(out, [2]string{k, used})
		}
	}
	return out
}

// nodeShutdownKeys are the shutdown keys of a node, each with the option
// and serve flag that set it: an export's URL may give them (the largest
// value of the exports wins, Node.Shutdown), a reference's may not. A
// node's Close drains all its calls in flight, served and made, within one
// budget, and a reference's connections are shared with the node's other
// references, so no reference has a drain bound of its own (as Dubbo's
// shutdown wait is the application's, and gRPC's ClientConn.Close has
// none).
var nodeShutdownKeys = []struct{ key, option, flag, what string }{
	{"shutdown.timeout", "kernel.WithShutdownTimeout", "--shutdown-timeout", "which bounds the node's Close for the calls in flight of all its references"},
	{"shutdown.wait", "kernel.WithShutdownWait", "--shutdown-wait", "its pause between unregistering its exports and closing their listeners"},
}

// tokenWhy is why a registry reference's own token is not used
// (ReferWarnings, kind "token").
const tokenWhy = "through a registry each call sends the token its provider publishes in the registry (none when it publishes none), not the reference's; a direct URL (airnode://HOST:PORT/SERVICE) sends the reference's own"

// unreadWhy words a pointKeysUnread triple [key, extension used,
// extensions that read it] of point: "cluster failfast does not read
// it; failover and forking do".
func unreadWhy(point string, t [3]string) string {
	readers := strings.Split(t[2], ",")
	verb := "does"
	if len(readers) > 1 {
		verb = "do"
	}
	return fmt.Sprintf("%s %s does not read it; %s %s", point, t[1], strings.Join(readers, " and "), verb)
}

// warnReference logs ReferWarnings' warnings for reference u of service
// and returns its error. Refer calls it.
func (n *Node) warnReference(u spi.URL, service string) error {
	warns, err := n.ReferWarnings(u)
	for _, w := range warns {
		n.logger.Warn(w.msg, append([]any{"service", service}, w.attrs...)...)
	}
	return err
}

package kernel

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// UnreadKeyWords is how Refer, Export and list --explain say that a URL
// key is read by nothing of the node, after "K=V " (UnreadKey.Words).
const UnreadKeyWords = "is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling)"

// UnreadKey is a key of a URL that neither airnode nor any extension of
// the node reads (UnreadKeys): Key as written ("shareconnections",
// "methods.Echo.timout") and Meant, the known key it is likely a
// misspelling of in the same form ("methods.Echo.timeout"), or "".
type UnreadKey struct {
	Key   string // the key as written: "shareconnections", "methods.Echo.timout"
	Meant string // the known key it likely misspells, in Key's form ("methods.Echo.timeout"); "" when none is close
}

// Words returns UnreadKeyWords with the did-you-mean when Meant is set:
// `is not read by ... or a misspelling); did you mean "timeout"?`.
func (k UnreadKey) Words() string {
	if k.Meant == "" {
		return UnreadKeyWords
	}
	return fmt.Sprintf("%s; did you mean %q?", UnreadKeyWords, k.Meant)
}

// UnreadKeys returns, in u's key order, each key of u that airnode with
// cat does not read (KnownKeys, registries' keys included: a registry's
// key on a service URL is warned of apart, RegistryKeys): a plugin's key,
// another tool's, or a misspelling, with the closest known key
// (internal/suggest's rule: one edit for a key of up to five bytes, else
// two, a swap counting one; on a tie the kernel's own). Refer and Export
// warn of each (the URL keeps it: URLs carry keys of plugins and other
// tools), and list --explain in the same words. Left out: a Dubbo key
// airnode does not implement (DubboKeyAdvice says more), and a
// method-level form of a known key: "methods.Echo.timeout", and Dubbo's
// "Echo.timeout" (spi.MethodLevelKey; "heartbeat.retires" is checked
// whole). Method-level forms of other keys are checked by their key
// ("methods.Echo.timout": did you mean "methods.Echo.timeout").
//
// While a plugin declared to the node failed to start (its stand-in in
// cat has StartFailed() true: pluginhost), the keys it reads are
// unknown, so a key with no close known key is not returned: it may be
// that plugin's (tester96 #3: a provider's acme.tenant, read by a filter
// plugin that failed in the consumer, was called read by nothing).
func UnreadKeys(cat *extension.Catalogs, u spi.URL) []UnreadKey {
	known := KnownKeys(cat)
	unknown := pluginStartFailed(cat)
	methods := u.Methods()
	var out []UnreadKey
	for _, k := range u.Keys() {
		if slices.Contains(known, k) {
			continue
		}
		key := baseKey(k, methods)
		if slices.Contains(known, key) {
			continue
		}
		if _, dubbo := dubboKeys[key]; dubbo || slices.Contains(dubboInfoKeys, key) {
			continue // unsupportedKeys says what it is; Dubbo's own reads nothing from an informational key
		}
		if _, after, ok := strings.Cut(key, "."); ok && slices.Contains(known, after) {
			continue // Dubbo's "<method>.<key>"
		}
		meant := ""
		if best := suggest.Closest(key, known); best != "" {
			meant = strings.TrimSuffix(k, key) + best
		}
		if meant == "" && unknown {
			continue // maybe the failed plugin's key
		}
		out = append(out, UnreadKey{Key: k, Meant: meant})
	}
	return out
}

// pluginStartFailed reports whether cat holds a loadbalance, registry or
// filter extension that stands for a plugin whose start failed (its
// builder has StartFailed() true), whose URL keys are then unknown.
func pluginStartFailed(cat *extension.Catalogs) bool {
	type startFailer interface{ StartFailed() bool }
	failed := func(b any, err error) bool {
		f, ok := b.(startFailer)
		return err == nil && ok && f.StartFailed()
	}
	for _, n := range cat.Filter.Names() {
		if failed(cat.Filter.Get(n)) {
			return true
		}
	}
	for _, n := range cat.LoadBalance.Names() {
		if failed(cat.LoadBalance.Get(n)) {
			return true
		}
	}
	for _, n := range cat.Registry.Names() {
		if failed(cat.Registry.Get(n)) {
			return true
		}
	}
	return false
}

// likelyTypos returns the pair [key, key meant] of each UnreadKeys key
// of u with a close known key: the misspellings among them.
func (n *Node) likelyTypos(u spi.URL) [][2]string {
	var out [][2]string
	for _, k := range UnreadKeys(n.cat, u) {
		if k.Meant != "" {
			out = append(out, [2]string{k.Key, k.Meant})
		}
	}
	return out
}

// unreadAttrs returns the log attributes Refer and Export add to the key
// of an UnreadKeys warning: the key meant, when one is close.
func unreadAttrs(k UnreadKey) []any {
	if k.Meant == "" {
		return nil
	}
	return []any{"did_you_mean", k.Meant}
}

// registryKeysOf returns, for each key of service URL u that only
// registries read (RegistryKeys: poll, root, session.timeout, file.cache,
// ...), the pair [key, the registries declaring it, comma-separated]. A
// registry reads its keys from the registry URL (--registry, the
// configuration's registry, Export's "registry" key), never from a
// service's: on u the key does nothing, which Export and Refer warn of.
func (n *Node) registryKeysOf(u spi.URL) [][2]string {
	reg := RegistryKeys(n.cat)
	var out [][2]string
	for _, k := range u.Keys() {
		if names, ok := reg[k]; ok {
			out = append(out, [2]string{k, strings.Join(names, ",")})
		}
	}
	return out
}

// RegistryKeys returns the URL keys that only registry extensions of cat
// declare (spi.KeyDescriber), each with the names of the registries
// declaring it, sorted: keys of registry URLs, which mean nothing on a
// service URL (zookeeper's root, session.timeout, file.cache; file's
// poll). A key the kernel reads too (backup, connect.timeout, protocol) or
// an extension of another point declares is left out, and so is a Dubbo
// service key airnode does not implement (dubboKeys): check on a service
// URL is Dubbo's reference check, which Refer and Export warn of in
// words fitting the side, not the ZooKeeper registry's check (tester71
// #8: check=true got both warnings, one naming a ZooKeeper not in use).
func RegistryKeys(cat *extension.Catalogs) map[string][]string {
	other := KernelKeys()
	out := map[string][]string{}
	for _, p := range cat.Describe() {
		if p.Key != "" {
			other = append(other, p.Key)
		}
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if p.Name == extension.PointRegistry {
					out[k.Key] = append(out[k.Key], e.Name)
				} else {
					other = append(other, k.Key)
				}
			}
		}
	}
	for k, names := range out {
		if _, dubbo := dubboKeys[k]; dubbo || slices.Contains(other, k) {
			delete(out, k)
		} else {
			slices.Sort(names)
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
// point's selecting key, the keys every extension of cat declares
// (spi.KeyDescriber) and each filter's activation key (spi.Activation.Key),
// as a new slice (with repeats).
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
	// A filter's activation key is read by the filter even when it
	// declares no keys (spi.KeyDescriber): bench's own bench.attempts was
	// warned of as read by nothing on every bench run.
	for _, name := range cat.Filter.Names() {
		if b, err := cat.Filter.Get(name); err == nil {
			if k := b.Activation().Key; k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// KernelKeys returns the URL keys the kernel itself reads: its own
// (methods, side, group, version, token, dispatcher, shutdown.wait,
// registry...) and
// config.KernelKeys (timeout, retries, weight, payload...), in that order,
// as a new slice. It leaves out the keys that select an extension
// (loadbalance, transport, ...: the catalogs' PointInfo.Key) and those
// extensions declare (spi.KeyDescriber). An extension that declares one of
// these keys shares it with the kernel: a URL's value reaches both.
func KernelKeys() []string {
	keys := []string{spi.KeyMethods, spi.KeySide, spi.KeyGroup, spi.KeyVersion, spi.KeyInterface, spi.KeyBackup, KeyApplication, "pid",
		keyDispatcher, keyConnectionConcurrency, keyMinPingInterval, keyAccepts, keyAcceptsPerIP, keyUnsentLimit, keyHealthService, "token", "connections",
		directory.KeyProtocol, "shutdown.timeout", "shutdown.wait", keyRegistry, keyAdvertise,
		directory.KeyEmptyProtection, directory.KeyRemovalDamping, directory.KeyRemovalGrace}
	for _, s := range config.KernelKeys {
		keys = append(keys, s.Key)
	}
	return keys
}

// conflictingMethodForms returns an error naming both keys when u writes
// one method-level key both ways with different values:
// "methods.Sleep.timeout=200ms" and Dubbo's "Sleep.timeout=300ms" (the
// first would win, silently). The same value both ways is accepted, and
// for a duration key of cat (durationKeys) the same duration in two spellings
// (spi.ParseDuration: "100ms" and "100", "1s" and "1000").
func conflictingMethodForms(cat *extension.Catalogs, u spi.URL) error {
	var durations map[string]string
	for _, k := range u.Keys() {
		rest, ok := strings.CutPrefix(k, "methods.")
		if !ok {
			continue
		}
		v, _ := u.Param(k)
		w, ok := u.Param(rest)
		_, key, dotted := strings.Cut(rest, ".")
		if !ok || w == v || !dotted {
			continue
		}
		if durations == nil {
			durations = durationKeys(cat)
		}
		if _, isDuration := durations[key]; isDuration {
			dv, errV := spi.ParseDuration(v)
			dw, errW := spi.ParseDuration(w)
			if errV == nil && errW == nil && dv == dw {
				continue
			}
		}
		return fmt.Errorf("URL keys %q=%q and %q=%q set the same method key to different values: give one of them", k, v, rest, w)
	}
	return nil
}

// keyRegistry is the provider URL key Export reads a registry URL from for
// that one service (instead of the node's registry); it is not published.
const keyRegistry = "registry"

// Doc prefixes of KernelKeyDocs: the side that reads the key.
const (
	sideProvider = "provider: "
	sideConsumer = "consumer: "
	sideBoth     = "both sides: "
	sideNode     = "node: " // an export's URL or the node's option; a reference's has no effect
)

// KernelKeyDocs returns a spi.KeyDoc for every key KernelKeys returns, in
// the same order, as a new slice: type, default (as the kernel's code
// applies it; "" when it is set by the kernel or derives from another key,
// which Doc then says) and one line that opens with the side reading the
// key ("provider: ", "consumer: ", "both sides: ", or "node: " for the
// node's shutdown keys, read from exports and the node's options, never
// from a reference) and gives its unit,
// bounds and whether it may be written per method. A consumer reads the
// provider URL merged with its own (spi.MergeURL), so a "consumer:" key
// set by the provider is the consumer's default. `airnode list --keys`
// prints them as the "kernel" group.
func KernelKeyDocs() []spi.KeyDoc {
	out := make([]spi.KeyDoc, 0, len(kernelKeyDocs))
	for _, k := range KernelKeys() {
		if d, ok := kernelKeyDocs[k]; ok {
			d.Key = k
			d.Values = slices.Clone(d.Values)
			out = append(out, d)
		}
	}
	return out
}

// kernelKeyDocs documents each KernelKeys key (the code that
// reads it: export.go, remote.go, conn.go, node.go, config.KernelKeys).
var kernelKeyDocs = map[string]spi.KeyDoc{
	spi.KeyMethods: {Type: spi.KeyTypeString,
		Doc: sideProvider + "the service's methods, comma-separated and sorted, set at export (not given); Dubbo's <method>.<key> applies to these"},
	spi.KeySide: {Type: spi.KeyTypeEnum, Values: []string{string(spi.Provider), string(spi.Consumer)},
		Doc: sideBoth + "which side a URL is, set by the kernel at export and refer (not given)"},
	spi.KeyGroup: {Type: spi.KeyTypeString,
		Doc: sideBoth + "service group, part of the service key group/interface:version; a consumer finds only providers of its group, or of its groups with a list a,b or * (any; through a registry)"},
	spi.KeyVersion: {Type: spi.KeyTypeString,
		Doc: sideBoth + "service version, part of the service key group/interface:version; a consumer finds only providers of its version, or of its versions with a list 1.0,2.0 or * (any; through a registry)"},
	spi.KeyInterface: {Type: spi.KeyTypeString,
		Doc: sideBoth + "service interface name when it differs from the URL's path; default the path"},
	spi.KeyBackup: {Type: spi.KeyTypeHosts,
		Doc: sideConsumer + "more provider addresses of a direct URL, h:p,h:p (Dubbo's form)"},
	KeyApplication: {Type: spi.KeyTypeString,
		Doc: sideBoth + "application name (Dubbo's), carried in every registry entry, by which Dubbo Admin groups services; default the executable's base name (airnode for the airnode binary), or the configuration's application (AIRNODE_APPLICATION); the kernel reads nothing from it"},
	"pid": {Type: spi.KeyTypeInt,
		Doc: sideBoth + "process id, set by the kernel in provider and consumer registry entries (not given)"},
	keyDispatcher: {Type: spi.KeyTypeEnum, Values: Dispatchers(), Default: dispatchers[0],
		Doc: sideProvider + "where requests run: adaptive (the connection's reader until a request runs over 1ms, then the worker pool), all (the worker pool), direct (the reader); per listening address"},
	keyConnectionConcurrency: {Type: spi.KeyTypeInt, Default: "16384",
		Doc: sideProvider + "requests in flight per consumer connection, beyond: SERVER_THREADPOOL_EXHAUSTED, up to 2147483647, 0 or negative: unlimited; per listening address"},
	keyMinPingInterval: {Type: spi.KeyTypeDuration, Default: "1s",
		Doc: sideProvider + "ping-flood guard: a consumer pinging faster than this on an idle connection (no call running or arriving) is closed after a few strikes, 0: off; default 1s or the provider's own heartbeat.interval when shorter; per listening address"},
	keyAccepts: {Type: spi.KeyTypeInt,
		Doc: sideProvider + "consumer connections served at once (Dubbo's accepts); one beyond is told why (its consumer's error names the limit) and closed, counted (airnode_accept_refused_total) and logged; 1..2147483647, default 0: the open-file limit (ulimit -n, read at listen) minus a reserve of max(64, 10%) for the provider's own descriptors, minus those open at listen (at least 32); per listening address"},
	keyAcceptsPerIP: {Type: spi.KeyTypeInt, Default: "0",
		Doc: sideProvider + "consumer connections served at once from one peer IP address, one beyond is closed at once as for accepts; 1..2147483647, 0: no limit; per listening address"},
	keyUnsentLimit: {Type: spi.KeyTypeSize, Default: "256MiB",
		Doc: sideProvider + "answers held unsent for all consumers together (bytes, 64KiB, 1GiB); over it, a connection holding 256KiB or more unread stops reading until under 64KiB, as each does alone at 8MiB, and one holding 64KiB starts no more requests; counted in airnode_unsent_limit_stalls_total; one with nothing written for 5s is closed (airnode_slow_consumer_closes_total); 0: no such bound; per listening address"},
	keyHealthService: {Type: spi.KeyTypeBool, Default: "true",
		Doc: sideProvider + "serve the health service airnode.Health (Check(service) SERVING, NOT_SERVING or SERVICE_UNKNOWN; not registered, no filters) on the address; false: off; per listening address"},
	spi.AttachmentToken: {Type: spi.KeyTypeString,
		Doc: sideProvider + "access token consumers must send (published in the provider URL), true: a random one made at export; absent: off"},
	"connections": {Type: spi.KeyTypeInt, Default: "1",
		Doc: sideConsumer + "connections to each provider, 1..64"},
	directory.KeyProtocol: {Type: spi.KeyTypeString, Default: Protocol,
		Doc: sideConsumer + "protocol of the providers; airnode is the only one"},
	"shutdown.timeout": {Type: spi.KeyTypeDuration, Default: "10s",
		Doc: sideNode + "whole graceful shutdown budget of the node's Shutdown and Close from its start (serve: from the signal): unregistering and shutdown.wait count in it, the calls in flight served drain in what is left, then those the node's references made; then calls still running are abandoned and calls made still unanswered fail CHANNEL_INACTIVE; > 0 and at least shutdown.wait; read from the exports' URLs, the largest wins; absent: the node's (kernel.WithShutdownTimeout, serve --shutdown-timeout); a reference's has no effect (Refer warns)"},
	"shutdown.wait": {Type: spi.KeyTypeDuration, Default: "2s",
		Doc: sideNode + "pause between unregistering and closing the listener, from 0 to shutdown.timeout (part of it); read from the exports' URLs, the largest wins; absent: the node's (kernel.WithShutdownWait, serve --shutdown-wait); a reference's has no effect (Refer warns)"},
	keyRegistry: {Type: spi.KeyTypeString,
		Doc: sideProvider + "registry URL for this service instead of the node's (zookeeper://h:2181); not published"},
	keyAdvertise: {Type: spi.KeyTypeString,
		Doc: sideProvider + "address published in the registry instead of the one listened on (NAT, port-forward, container, multi-homed host): HOST, HOST:PORT, [IPv6]:PORT, :PORT or a network interface name (its address); a host alone keeps the port listened on; absent: the address listened on (for 0.0.0.0, the first non-loopback one); serve --advertise sets it; not published"},
	"timeout": {Type: spi.KeyTypeDuration, Default: "1s",
		Doc: sideConsumer + "call timeout, > 0, then CLIENT_TIMEOUT or SERVER_TIMEOUT; a provider's value is its consumers' default; method-level allowed; a call's own timeout (a caller's \"timeout\" attachment, call and bench --timeout) beats every level"},
	"connect.timeout": {Type: spi.KeyTypeDuration, Default: "3s",
		Doc: sideConsumer + "bound on connecting to a provider: the dial and the provider's answer to the connection's first ping together, > 0; raise it on a lossy or slow path (Linux: a lost SYN costs 1 s, and a lost first ping after it 3 s more)"},
	"reconnect.backoff": {Type: spi.KeyTypeDuration, Default: "100ms",
		Doc: sideConsumer + "first delay before redialling a dead connection, doubling, with jitter, > 0..30s"},
	"retries": {Type: spi.KeyTypeInt, Default: "2",
		Doc: sideConsumer + "extra tries on another provider (failover cluster), 0..100; a provider's value is its consumers' default; method-level allowed"},
	"weight": {Type: spi.KeyTypeInt, Default: "100",
		Doc: sideProvider + "provider weight for the consumers' balancers, >= 0, 0: never picked"},
	"warmup": {Type: spi.KeyTypeDuration, Default: defaultWarmupText,
		Doc: sideProvider + "warm-up period: the weight grows from 1 over it after start, >= 0, 0: none"},
	"timestamp": {Type: spi.KeyTypeInt,
		Doc: sideProvider + "start time, ms since the epoch, set at export (not given)"},
	"payload": {Type: spi.KeyTypeSize, Default: "8MiB",
		Doc: sideBoth + "largest frame body, bytes, >= 1; a longer call is refused (BAD_REQUEST by the provider, BAD_RESPONSE by the consumer, naming the limit) and the connection goes on; the provider's is per listening address"},
	"heartbeat.interval": {Type: spi.KeyTypeDuration, Default: "60s",
		Doc: sideBoth + "idle period before a ping, and the ping period, from 10ms to 24h"},
	"heartbeat.timeout": {Type: spi.KeyTypeDuration,
		Doc: sideBoth + "silence before the consumer reconnects or the provider closes, > 0; default 3 × heartbeat.interval (idle provider: + 20s)"},
	"heartbeat.retries": {Type: spi.KeyTypeInt, Default: "3",
		Doc: sideConsumer + "idle heartbeat: failed pings in a row before it reconnects, from 1 to 1000"},
	"heartbeat.ping.timeout": {Type: spi.KeyTypeDuration,
		Doc: sideConsumer + "idle heartbeat: how long a ping may wait for its answer, > 0; default heartbeat.interval"},
	"heartbeat.ping.on.timeout": {Type: spi.KeyTypeBool, Default: "true",
		Doc: sideConsumer + "a call timing out with nothing read since it was sent makes the consumer ping at once; no answer within max(1s, timeout), capped by heartbeat.ping.timeout (idle) or heartbeat.interval (dual), closes the connection; false: off"},
	"hash.arguments": {Type: spi.KeyTypeIntList, Default: "0",
		Doc: sideConsumer + "consistenthash: indexes of the arguments hashed, each >= 0 and given once; method-level allowed"},
	"hash.nodes": {Type: spi.KeyTypeInt, Default: "160",
		Doc: sideConsumer + "consistenthash: virtual nodes per provider, 1..65536; method-level allowed"},
	"executes": {Type: spi.KeyTypeInt, Default: "0",
		Doc: sideProvider + "calls of a method running at once on the export, 0: no limit; method-level allowed"},
	"actives": {Type: spi.KeyTypeInt, Default: "0",
		Doc: sideConsumer + "calls of a method in flight to each provider, 0: no limit; method-level allowed"},
	directory.KeyEmptyProtection: {Type: spi.KeyTypeBool, Default: "true",
		Doc: sideConsumer + "empty protection: a registry notification listing no provider of the reference while some are connected keeps those (one Warn, counted in airnode_directory_empty_protections_total) until the registry lists one again; a kept provider still goes when its connection closes or it announces its shutdown; false: the reference empties; read from the reference's URL only, not the provider's"},
	directory.KeyRemovalDamping: {Type: spi.KeyTypeInt, Default: "25",
		Doc: sideConsumer + "removal damping: a registry notification dropping this percent or more of the reference's connected providers at once (two at least; within 5s) removes those still connected only after registry.removal.grace (one Warn, airnode_directory_damped_removals_total); unconnected ones go at once; 0..100, 0 or 100: off; read from the reference's URL only, not the provider's"},
	directory.KeyRemovalGrace: {Type: spi.KeyTypeDuration, Default: "30s",
		Doc: sideConsumer + "removal damping: how long a damped removal waits for the providers to be listed again (default: ZooKeeper's default session.timeout, within which a wiped ZooKeeper's providers re-register), 100ms..1h; read from the reference's URL only, not the provider's"},
	keyOutlierConsecutive: {Type: spi.KeyTypeInt, Default: "5",
		Doc: sideConsumer + "outlier ejection: a provider whose calls fail this many times in a row (SERVER_TIMEOUT with the call's whole timeout, CHANNEL_INACTIVE, SERVER_ERROR; an answer resets the count) is not picked for outlier.ejection, >= 0, 0: off"},
	keyOutlierEjection: {Type: spi.KeyTypeDuration, Default: "5s",
		Doc: sideConsumer + "outlier ejection: how long a failing provider's first ejection lasts, doubling for each one soon after (stepping down once per outlier.ejection served), up to 5m; > 0, at most 5m"},
	keyOutlierMaxPercent: {Type: spi.KeyTypeInt, Default: "50",
		Doc: sideConsumer + "outlier ejection: most of a reference's providers ejected at once, percent, 0..100; the last available provider is never ejected"},
}

// dubboKeys are URL keys of Dubbo's <dubbo:reference> and <dubbo:service>
// that airnode does not implement, each with what airnode offers instead.
// A Dubbo migrant who writes mock=... believes they have a fallback, so
// Refer and Export warn of each one a URL sets (unsupportedKeys) rather
// than pass it silently as a key of another tool. Dubbo's informational
// keys (dubboInfoKeys: owner, organization, module, layer) are not
// listed: they do nothing in Dubbo either, and nothing warns of them.
var dubboKeys = map[string]string{
	"mock":                "no mock or fallback: handle the call's error (spi.StatusOf) or return a fallback from a consumer filter",
	"async":               "calls are synchronous: make the call in a goroutine of your own",
	"sent":                "calls are synchronous: a call returns with the provider's answer",
	"check":               "Refer never checks for providers (Dubbo's check=false): a call with none fails SERVICE_NOT_FOUND; Reference.WaitAvailable(ctx) waits for one, Reference.Providers() lists them",
	"tps":                 "no TPS limit (Dubbo's TpsLimitFilter): executes bounds a provider's calls running at once, actives a consumer's; limit rates in a provider filter",
	"tps.interval":        "no TPS limit (Dubbo's TpsLimitFilter): executes bounds a provider's calls running at once, actives a consumer's; limit rates in a provider filter",
	"serialization":       "the codec key chooses the serialization (codec=msgpack, json or protobuf): the consumer's codec encodes its requests, and the provider answers in the codec each request names, so the two sides need not agree",
	"stub":                "no consumer stub: wrap the Reference in a type of your own, or use a consumer filter",
	"local":               "no consumer stub: wrap the Reference in a type of your own, or use a consumer filter",
	"sticky":              "no sticky provider: loadbalance=consistenthash sends the calls with equal first arguments to one provider",
	"lazy":                "connections are dialled in the background at Refer, and a call waits for the first one within its timeout",
	"generic":             "Reference.Invoke is already generic (no Go interface needed); Dubbo's generic mark is an attachment here: send spi.AttachmentGeneric=true (airnode call does) and the provider refuses a map key naming no struct field, listing the fields, where a typed call has it ignored",
	"validation":          "no argument validation: validate in the method or in a provider filter",
	"cache":               "no result cache: cache in the caller or in a consumer filter",
	"merger":              "no merging of several groups' results: a reference of group=a,b or group=* sends each call to one provider of one of them",
	"onreturn":            "no invocation callbacks: use a consumer filter",
	"oninvoke":            "no invocation callbacks: use a consumer filter",
	"onthrow":             "no invocation callbacks: use a consumer filter",
	"callbacks":           "no callback arguments: the provider answers each call once",
	"proxy":               "no proxy factory: Reference.Call and Reference.Invoke make the calls",
	"router":              "no routing rules: a reference calls the providers of its group and version",
	"tag":                 "no tag routing: use group (or version) to split providers",
	"dubbo.tag":           "no tag routing: use group (or version) to split providers",
	"scope":               "no in-process (injvm) calls: every call goes through a transport, loopback for a provider of the same process",
	"injvm":               "no in-process (injvm) calls: every call goes through a transport, loopback for a provider of the same process",
	"threadpool":          "the provider's dispatcher key chooses where requests run (adaptive, all, direct); threads sizes the pool",
	"delay":               "Export registers as soon as the provider listens: call Export later to delay it",
	"register":            "Export registers in the node's registry (or the registry key's); for a provider consumers name by address, refer with airnode://host:port/service",
	"dynamic":             "Export registers in the node's registry (or the registry key's)",
	"subscribe":           "a reference subscribes to its registry; a direct URL (airnode://host:port/service) uses none",
	"reconnect":           "connections always reconnect: reconnect.backoff sets the first delay",
	"client":              "the transport key chooses the transport (smux, tcp)",
	"server":              "the transport key chooses the transport (smux, tcp)",
	"deprecated":          "consumers are not warned of deprecated services: use a new version",
	"shareconnections":    "no shared-connection count: a node's references to one provider address share its connections (connections=N each, 1 by default)",
	"queues":              "no request queue length: the provider's dispatcher runs requests (dispatcher=adaptive, all, direct); connection.concurrency bounds a consumer connection's requests in flight, executes a method's running calls",
	"iothreads":           "no I/O thread count: each connection has its own reader goroutine",
	"provided-by":         "no application-level discovery: a reference finds providers by service key (group/interface:version) in the registry",
	"init":                "Refer always builds the reference at once and dials its providers in the background; Reference.WaitAvailable(ctx) waits for one",
	"reference.filter":    "the filter key lists a reference's filters (filter=name,-name; default: the activated set)",
	"service.filter":      "the filter key lists an export's filters (filter=name,-name; default: the activated set)",
	"application.version": "the application key names the application; it has no version",
	"anyhost":             addressAdvice,
	"host":                addressAdvice,
	"bind.ip":             addressAdvice,
	"bind.port":           addressAdvice,
	"register.ip":         addressAdvice,
}

// dubboInfoKeys are Dubbo's informational keys, carried in its URLs and
// read by nothing in Dubbo either (Dubbo Admin shows them): UnreadKeys
// leaves them out.
var dubboInfoKeys = []string{"owner", "organization", "module", "layer", "environment"}

// addressAdvice is dubboKeys' advice for Dubbo's address keys (anyhost,
// host, bind.ip, bind.port, register.ip): the provider publishes the
// address it listens on, and the advertise key another.
const addressAdvice = "the provider listens on its URL's address (serve --listen IP:PORT; 0.0.0.0 or no host: every interface) and publishes it (for every interface, this host's first non-loopback address); to publish another address (NAT, port-forward, container, another interface) give serve --advertise HOST[:PORT] (or an interface name), the advertise key of plugins.yaml, AIRNODE_ADVERTISE, or the URL key advertise=HOST[:PORT]"

// unsupportedKeys returns, for each key of u that is a Dubbo key airnode
// does not implement (dubboKeys; also in its method-level forms,
// "methods.Echo.mock" and "Echo.mock", as UnreadKeys reads them), the
// pair [key, what airnode offers instead], in u's key order. A key some
// extension of the node's catalogs declares (a plugin reading "mock") is
// not reported: it is read.
func (n *Node) unsupportedKeys(u spi.URL) [][2]string {
	var out [][2]string
	var known []string
	methods := u.Methods()
	for _, k := range u.Keys() {
		if rest, ok := strings.CutPrefix(k, "default."); ok && !slices.Contains(methods, "default") {
			// Dubbo 2.6's "default." prefix (default.timeout): read as
			// nothing here, where UnreadKeys takes it for a method's key
			out = append(out, [2]string{k, fmt.Sprintf("Dubbo's %q prefix is not read: set %s (the service-level key is every method's default)", "default.", rest)})
			continue
		}
		key := baseKey(k, methods)
		advice, ok := dubboKeys[key]
		if !ok {
			continue
		}
		if known == nil {
			known = serviceURLKeys(n.cat)
		}
		if slices.Contains(known, key) {
			continue
		}
		out = append(out, [2]string{k, advice})
	}
	return out
}

// serviceURLKeys is KnownKeys without the keys only registries declare:
// a registry URL's keys are not a service's or a reference's, so the
// ZooKeeper registry's check (Dubbo's registry check) does not make
// Dubbo's reference check=false a key airnode reads on a reference.
func serviceURLKeys(cat *extension.Catalogs) []string {
	keys := KernelKeys()
	for _, p := range cat.Describe() {
		if p.Key != "" {
			keys = append(keys, p.Key)
		}
		if p.Name == extension.PointRegistry {
			continue
		}
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				keys = append(keys, k.Key)
			}
		}
	}
	return keys
}

// baseKey returns the key a method-level key k sets ("methods.Echo.mock"
// and, for Echo in methods or an exported name when methods is empty,
// "Echo.mock": "mock"; spi.MethodLevelKey), else k.
func baseKey(k string, methods []string) string {
	if _, key, ok := spi.MethodLevelKey(k, methods); ok {
		return key
	}
	return k
}

// warnUnsupportedKeys logs one warning per key of provider URL u that
// is a Dubbo key airnode does not implement (unsupportedKeys), naming the
// service, the key and what to use instead; Export calls it (Refer warns
// through ReferWarnings). A key only Dubbo's reference reads
// (consumerDubboKeys: check) gets instead one warning that it has no
// effect on a provider, since the consumer's advice (Refer,
// WaitAvailable) does not fit a provider (tester71 #8); for check, the
// registry's own check is named when the export's registry, regURL, is
// one that reads it (zookeeper).
func (n *Node) warnUnsupportedKeys(u spi.URL, service string, regURL spi.URL) {
	methods := u.Methods()
	for _, t := range n.unsupportedKeys(u) {
		key := baseKey(t[0], methods)
		if why, ok := consumerDubboKeys[key]; ok {
			if key == "check" && slices.Contains(registryKeysDeclared(n.cat)["check"], regURL.Scheme()) {
				why += fmt.Sprintf("; for the %s registry's own check (register without a session), give check=false on the registry URL (%s://HOST:PORT?check=false)", regURL.Scheme(), regURL.Scheme())
			}
			n.logger.Warn("URL key is a consumer's and has no effect on a provider (ignored)", "service", service, "key", t[0], "why", why)
			continue
		}
		n.logger.Warn("URL key is Dubbo's and airnode does not implement it (ignored)", "service", service, "key", t[0], "instead", t[1])
	}
}

// consumerDubboKeys are the dubboKeys only Dubbo's reference reads (a
// provider's value is not a consumer's default there either), each with
// why it does nothing on a provider URL: Export warns with it instead of
// the consumer's advice.
var consumerDubboKeys = map[string]string{
	"check": "check is Dubbo's reference check (fail at refer when no provider is available), a consumer key: a provider has nothing to check",
}

// registryKeysDeclared returns the keys registry extensions of cat
// declare (spi.KeyDescriber), each with the names of the registries
// declaring it: RegistryKeys before it leaves out the keys others read.
func registryKeysDeclared(cat *extension.Catalogs) map[string][]string {
	out := map[string][]string{}
	for _, p := range cat.Describe() {
		if p.Name != extension.PointRegistry {
			continue
		}
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				out[k.Key] = append(out[k.Key], e.Name)
			}
		}
	}
	return out
}

// dubboExtensions says, for a cluster or loadbalance name Dubbo has and
// airnode does not bundle, what to choose instead; Refer adds it to the
// catalog's "unknown cluster" error.
var dubboExtensions = map[string]string{
	"cluster=failback":     "Dubbo's failback (retry later in the background) is not in airnode: failover retries at once on another provider, failsafe drops the error",
	"cluster=broadcast":    "Dubbo's broadcast (call every provider) is not in airnode: call each provider with a direct reference (airnode://host:port/service)",
	"cluster=available":    "Dubbo's available (the first available provider) is not in airnode: failfast with any balancer calls an available provider",
	"cluster=mergeable":    "Dubbo's mergeable (merge several groups' results) is not in airnode: a reference of group=a,b or group=* sends each call to one provider of one of them",
	"cluster=zone-aware":   zoneAwareHint,
	"cluster=zoneaware":    zoneAwareHint,
	"loadbalance=adaptive": "Dubbo's adaptive is not bundled: loadbalance=p2c (power of two choices on latency × calls in flight) is the closest; leastactive and shortestresponse weigh load too",
}

// zoneAwareHint is dubboExtensions' line for Dubbo's zone-aware cluster,
// under its name (zone-aware) and the spelling without the hyphen.
const zoneAwareHint = "Dubbo's zone-aware (prefer the registry of the caller's zone) is not in airnode: a reference has one registry, so give each zone its own registry (or group) and refer the one of the caller's zone"

// dubboExtensionHint returns the dubboExtensions line for u's cluster or
// loadbalance (service level), or "".
func dubboExtensionHint(u spi.URL) string {
	for _, key := range []string{"cluster", "loadbalance"} {
		if v, ok := u.Param(key); ok {
			if h, ok := dubboExtensions[key+"="+v]; ok {
				return h
			}
		}
	}
	return ""
}

// DubboKeyAdvice returns, for a URL key of Dubbo's that airnode does not
// implement (mock, async, check, serialization, stub, sticky, delay,
// threadpool, ...; the base key, not a method-level form), what airnode
// offers instead and true; "" and false for any other key. Refer and
// Export warn with it; a command listing a URL's unread keys (list
// --explain) can say the same.
func DubboKeyAdvice(key string) (string, bool) {
	a, ok := dubboKeys[key]
	return a, ok
}

// methodMeant returns the method of methods that m most likely means: the
// one spelt the same but for case ("sleep", Dubbo's Java spelling, for
// Sleep; "sayhello" for SayHello), else the closest by internal/suggest's
// rule, case aside ("slep" and "Slep" for Sleep), else "".
func methodMeant(m string, methods []string) string {
	lower := make([]string, len(methods))
	for i, c := range methods {
		if strings.EqualFold(c, m) {
			return c
		}
		lower[i] = strings.ToLower(c)
	}
	if c := suggest.Closest(strings.ToLower(m), lower); c != "" {
		return methods[slices.Index(lower, c)]
	}
	return ""
}

// CheckMethodNames returns an error for each method-level key of
// reference URL u whose method no service can have, for when the
// service's methods are not known: a direct reference's URL that lists
// no "methods" (its providers are its own hosts, and the consumer learns
// no method list from them). A service's methods are exported Go names,
// so such a key sets nothing: "methods.<m>.<key>" for any key, and
// Dubbo's "<m>.<key>" for a key read per method (MethodKeys) that is not
// itself a key airnode reads (connect.timeout, session.timeout), m being
// a Go identifier with a lower-case first letter ("sleep.timeout", as a
// Dubbo user writes a Java method). Each error names the key, the method
// and the exported name meant ("did you mean "Sleep"?"). Dubbo's
// service-level "default.<key>" form is not one. Nil when there is none.
// With the methods known, CheckMethodKeys checks every name.
func (n *Node) CheckMethodNames(u spi.URL) error {
	keys := methodKeyReader{n: n}
	var errs []error
	for _, k := range u.Keys() {
		m, key, dubbo, ok := keys.split(k)
		if !ok || dubbo && m == "default" || !lowerIdentifier(m) {
			continue
		}
		r, size := utf8.DecodeRuneInString(m)
		v, _ := u.Param(k)
		errs = append(errs, &spi.KeyError{Keys: []string{k}, Values: []string{v},
			Msg: fmt.Sprintf("URL key %q sets %s for method %s, but service %s has no method %s: a service's methods are exported Go names (upper-case first letter); did you mean %q?",
				k, key, m, u.ServiceKey(), m, string(unicode.ToUpper(r))+m[size:])})
	}
	return errors.Join(errs...)
}

// lowerIdentifier reports whether s is a Go identifier starting with a
// lower-case letter: a name no exported method has.
func lowerIdentifier(s string) bool {
	for i, r := range s {
		if i == 0 && !unicode.IsLower(r) || !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			return false
		}
	}
	return s != ""
}

// uncheckedMethodKeys returns the method-level keys of reference URL u
// (spi.URL.MethodParam's forms, for an exported method name: the keys
// CheckMethodNames leaves) that only the service's method list could
// check, in u's key order.
func (n *Node) uncheckedMethodKeys(u spi.URL) []string {
	keys := methodKeyReader{n: n}
	var out []string
	for _, k := range u.Keys() {
		if m, _, _, ok := keys.split(k); ok && exportedName(m) {
			out = append(out, k)
		}
	}
	return out
}

// methodKeyReader splits URL keys into method and key as the method-key
// checks read them (CheckMethodKeys, CheckMethodNames), loading the
// node's known and per-method keys on first need.
type methodKeyReader struct {
	n                *Node
	known, perMethod []string
}

// split returns the method and the key a method-level key k sets:
// "methods.<m>.<key>" for any key, or Dubbo's "<m>.<key>" (dubbo true)
// for a key read per method (MethodKeys) when k is not itself a key
// airnode reads (connect.timeout, session.timeout). ok is false for any
// other key. It differs from spi.MethodLevelKey on purpose: it looks for
// mistakes, so a Dubbo "<m>.<key>" counts whatever m is (a method the
// service lacks, a lower-case Java spelling, "sleep.timeout": did you
// mean Sleep?), where MethodLevelKey reads only what MethodParam applies.
func (r *methodKeyReader) split(k string) (method, key string, dubbo, ok bool) {
	if rest, isM := strings.CutPrefix(k, spi.KeyMethods+"."); isM {
		method, key, ok = strings.Cut(rest, ".")
		return method, key, false, ok
	}
	method, key, dotted := strings.Cut(k, ".")
	if !dotted {
		return "", "", false, false
	}
	if r.known == nil {
		r.known, r.perMethod = r.n.knownKeys(), r.n.MethodKeys()
	}
	return method, key, true, slices.Contains(r.perMethod, key) && !slices.Contains(r.known, k)
}

// bareMillis returns, for each duration key of u (durationKeys; plainly
// or per method) given as a bare number under spi.BareMillisBelow of the
// key's default (timeout=5, heartbeat.interval=60, warmup=600), the
// triple [key, why, warning]: why is "5 is 5ms (a bare number is
// milliseconds, as in Dubbo); write 5s for seconds", and warning is
// "K=" and why, K the key as the user wrote it on side (writtenAs:
// "AIRNODE_CONSUMER_TIMEOUT" for a value from that variable, else the
// key). Refer and Export warn of each once; the value is used as given.
func (n *Node) bareMillis(u spi.URL, side spi.Side) [][3]string {
	durations := durationKeys(n.cat)
	methods := u.Methods()
	var out [][3]string
	for _, k := range u.Keys() {
		def, ok := durations[baseKey(k, methods)]
		if !ok {
			continue
		}
		v, _ := u.Param(k)
		if why := spi.BareMillisWarning(v, def); why != "" {
			out = append(out, [3]string{k, why, n.writtenAs(side, k, v) + "=" + why})
		}
	}
	return out
}

// durationKeys returns the duration keys of a node with catalogs cat, each
// with its default ("1s"; "" when it has none or derives from another
// key): the kernel's (config.KernelKeys of KindDuration, kernelKeyDocs of
// spi.KeyTypeDuration, shutdown.* among them) and those the extensions
// of cat but registries declare of spi.KeyTypeDuration.
func durationKeys(cat *extension.Catalogs) map[string]string {
	durations := map[string]string{}
	add := func(key, def string) {
		if d, ok := durations[key]; !ok || d == "" {
			durations[key] = def
		}
	}
	for _, s := range config.KernelKeys {
		if s.Kind == config.KindDuration {
			add(s.Key, s.Default)
		}
	}
	for k, d := range kernelKeyDocs {
		if d.Type == spi.KeyTypeDuration {
			add(k, d.Default)
		}
	}
	for _, p := range cat.Describe() {
		if p.Name == extension.PointRegistry {
			continue // a registry's key does nothing on a service URL: registryKeysOf says so
		}
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if k.Type == spi.KeyTypeDuration {
					add(k.Key, k.Default)
				}
			}
		}
	}
	return durations
}

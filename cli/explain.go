package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/airnode/airnode/kernel/directory"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/airnode/airnode/extensions/lb/consistenthash"
	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// The kernel works with three URLs for one service, and list --explain
// resolves every point and key from the one the kernel reads it from:
//
//   - the consumer's reference URL (the explained URL with the config's
//     reference of its interface as defaults, as call and bench build it):
//     the cluster and load balancer and their keys (kernel/refer.go build),
//     the consumer filter chain (kernel/filter.go filters);
//   - the provider URL (--provider, or the explained URL over the config's
//     protocol and services[i].params, as serve exports it): the
//     dispatcher and the server keys, the provider filter chain, and every
//     key Export checks (kernel/export.go serverFor, readInvokerSettings);
//   - the merged URL (spi.MergeURL: provider base, consumer keys win): the
//     transport, codec, heartbeat, timeouts and connection keys of each
//     provider invoker, and the per-provider filters (kernel/remote.go).
//
// A direct URL (hosts in it, airnode://127.0.0.1:20880/demo.Echo) without
// --provider never meets a provider URL: the kernel's "direct" registry
// makes each provider from the reference URL itself
// (extensions/registry/direct), so the merged URL is the consumer's (less
// weight, warmup and timestamp, which each provider sets for itself), and
// the config's protocol and services[i].params reach only the provider
// side (the dispatcher, executes, the provider filters), labelled as the
// provider's.

// perMethodPoints are the points the kernel resolves per method: the
// consumer's cluster and load balancer (kernel/refer.go perMethod, build)
// and each call's codec (kernel/remote.go resolveCall). Transport and
// heartbeat are chosen per connection, the dispatcher per listening
// address, the filter chains per service.
var perMethodPoints = []string{extension.PointCluster, extension.PointLoadBalance, extension.PointCodec}

// consumerPoints are the points the consumer builds from its own
// reference URL only: a provider's value for them is not used.
var consumerPoints = []string{extension.PointCluster, extension.PointLoadBalance}

// perMethodKeys are the kernel keys read per method: timeout
// (kernel/remote.go resolveCall), retries (failover, forking's forks),
// hash.arguments and hash.nodes (consistenthash), executes and actives
// (the limit filters, per invocation). Every other kernel key is read once
// per connection, provider or service.
var perMethodKeys = []string{"timeout", "retries", "hash.arguments", "hash.nodes", "executes", "actives"}

// consumerKeys are kernel keys read from the consumer's reference URL
// only (the balancer is built from it); providerKeys from the provider
// URL only (the provider's executelimit filter). retries, as the keys
// the clusters declare (idempotent, forks), is the reference's when it
// sets it at any level, else the provider's (clusterValue).
var (
	consumerKeys = []string{"hash.arguments", "hash.nodes"}
	providerKeys = []string{"executes", "connection.concurrency", "heartbeat.min.ping.interval", "accepts", "accepts.per.ip", "unsent.limit", "health.service", "shutdown.timeout", "shutdown.wait"}
)

// explainedKey is one row key of the KEYS section: a kernel key and its
// default as the section shows it.
type explainedKey struct{ key, def string }

// explainedKeys are the keys of the KEYS section: config.KernelKeys, then
// the kernel's other keys with a value of their own (the server's
// connection.concurrency, heartbeat.min.ping.interval, accepts,
// accepts.per.ip, unsent.limit and health.service, the consumer's
// connections, the shutdown keys), with their defaults from
// kernel.KernelKeyDocs. The dispatcher has its row among the points;
// identity keys (group, methods, pid, ...) are in the url line.
func explainedKeys() []explainedKey {
	var out []explainedKey
	for _, spec := range config.KernelKeys {
		out = append(out, explainedKey{spec.Key, spec.Default})
	}
	for _, d := range kernel.KernelKeyDocs() {
		switch d.Key {
		case "accepts":
			// derived from the serving process's open-file limit, read at listen
			out = append(out, explainedKey{d.Key, "ulimit -n − reserve"})
		case "connections", "connection.concurrency", "heartbeat.min.ping.interval", "accepts.per.ip", "unsent.limit", "health.service", "shutdown.timeout", "shutdown.wait":
			out = append(out, explainedKey{d.Key, d.Default})
		}
	}
	return out
}

// hashKeys are the kernel keys only consistenthash reads: the KEYS
// section shows them when a scope's balancer is consistenthash or the
// consumer's URL sets them.
var hashKeys = []string{"hash.arguments", "hash.nodes"}

// chosenBalancers returns the names of the balancers the consumer uses,
// service level and each method's, sorted, without repeats.
func chosenBalancers(eC *extension.Explanation, methods []string) []string {
	var out []string
	for _, m := range append([]string{""}, methods...) {
		if n := pointChoice(eC, extension.PointLoadBalance, m).Name; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// shownKeys is explainedKeys less hashKeys when no balancer of balancers
// is consistenthash and the consumer's URL does not set them.
func (x *explained) shownKeys(balancers []string) []explainedKey {
	all := explainedKeys()
	if slices.Contains(balancers, consistenthash.Name) {
		return all
	}
	out := all[:0]
	for _, k := range all {
		if slices.Contains(hashKeys, k.key) && !x.setsKey(k.key) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// setsKey reports whether the consumer's URL sets key, at service or
// method level.
func (x *explained) setsKey(key string) bool {
	for _, k := range x.consumer.Keys() {
		if k == key || strings.HasSuffix(k, "."+key) {
			return true
		}
	}
	return false
}

// keyRetries is the kernel key failover reads per call: the reference's,
// else the provider's (clusterValue).
const keyRetries = "retries"

// clusterValue resolves key, which a cluster reads per call (retries,
// idempotent, forks), for scope m ("" for the service) as the cluster
// does: the reference's own value, at method or service level, wins;
// else the provider's (the merged URL holds it; a direct URL's merged
// URL is its own); else absent (the default). It returns the value and
// the key as written.
func (x *explained) clusterValue(m, key string) (v, written string, ok bool) {
	if v, written, ok = x.consumer.MethodParam(m, key); ok {
		return v, written, ok
	}
	return x.merged.MethodParam(m, key)
}

// clusterNotUsed is the row under a cluster key's (v, written, ok:
// clusterValue's for scope m) that names a provider's value of it the
// reference's own replaces, or "": "(the provider's Sleep.retries=0 is
// not used: the reference's retries=1 wins)". A direct URL's provider
// values have their own row (directReason).
func (x *explained) clusterNotUsed(m, key, v, written string, ok bool) string {
	if x.direct || !ok {
		return ""
	}
	if _, _, mine := x.consumer.MethodParam(m, key); !mine {
		return ""
	}
	pv, pkey, pok := x.provider.MethodParam(m, key)
	if !pok || pv == v && pkey == written || m != "" && pkey == key {
		return ""
	}
	return fmt.Sprintf("(the provider's %s=%s is not used: the reference's %s=%s wins)", pkey, pv, written, v)
}

// serviceLevelRows writes the rows of ck, a key its cluster reads from
// the reference URL at service level only (spi.KeyDoc.ServiceLevelOnly:
// failover's retry.tokens), as the cluster reads it: the reference's
// service-level value, else the default; then, each under its scope, a
// provider's value and a method-level form as not used, with why
// (tester81 #2: Sleep.retry.tokens=5 and a provider's retry.tokens=10
// were shown as applying). why is kernel.Node.ServiceLevelOnlyWhy's.
func (x *explained) serviceLevelRows(tw io.Writer, ck declaredKey, methods []string, why string) {
	key := ck.doc.Key
	if v, ok := x.consumer.Param(key); ok {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", key, scope(""), readAsGiven(ck.doc.Type, v), x.from(key, "consumer"))
	} else {
		def := ck.doc.Default
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", key, scope(""), readAs(ck.doc.Type, def), "default ("+ck.name+")")
	}
	if pv, ok := x.provider.Param(key); ok && !x.direct {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(""), "", fmt.Sprintf("(the provider's %s=%s is not used: %s %s reads it from the reference's own URL, and a provider's value is not its consumers' default)", key, pv, "cluster", ck.name))
	}
	for _, m := range methods {
		if v, written, ok := x.consumer.MethodParam(m, key); ok && written != key {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(%s=%s is not used: %s)", written, v, why))
		}
		if v, written, ok := x.provider.MethodParam(m, key); ok && written != key && !x.direct {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(the provider's %s=%s is not used: %s)", written, v, why))
		}
	}
}

// chosenClusters returns the names of the clusters the consumer uses,
// service level and each method's, sorted, without repeats.
func chosenClusters(eC *extension.Explanation, methods []string) []string {
	var out []string
	for _, m := range append([]string{""}, methods...) {
		if n := pointChoice(eC, extension.PointCluster, m).Name; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// clusterKeys returns the keys the clusters declare (spi.KeyDescriber:
// failover's idempotent, forking's forks) that shown does not hold, in
// cluster then declaration order.
func clusterKeys(cat *extension.Catalogs, clusters []string, shown []explainedKey) []declaredKey {
	return declaredKeys(cat.Cluster.Get, clusters, shown, func(spi.KeyDoc) bool { return false })
}

// balancerKeys returns the keys the balancers declare (a plugin's
// p2c.choices) that shown does not hold, beyond the kernel's keys, in
// balancer then declaration order.
func balancerKeys(cat *extension.Catalogs, balancers []string, shown []explainedKey) []declaredKey {
	return declaredKeys(cat.LoadBalance.Get, balancers, shown, func(k spi.KeyDoc) bool {
		return slices.ContainsFunc(config.KernelKeys, func(s config.KeySpec) bool { return s.Key == k.Key })
	})
}

// declaredKey is a URL key a chosen extension (a cluster, a balancer)
// declares itself (spi.KeyDescriber).
type declaredKey struct {
	name string // the extension's
	doc  spi.KeyDoc
}

// declaredKeys returns the keys that the extensions get finds by names
// declare (spi.KeyDescriber), each once, leaving out those shown holds and
// those skip refuses, in name then declaration order. A name get does not
// find is left out.
func declaredKeys[B any](get func(string) (B, error), names []string, shown []explainedKey, skip func(spi.KeyDoc) bool) []declaredKey {
	var out []declaredKey
	for _, name := range names {
		b, err := get(name)
		if err != nil {
			continue
		}
		d, ok := any(b).(spi.KeyDescriber)
		if !ok {
			continue
		}
		for _, k := range d.Keys() {
			if slices.ContainsFunc(shown, func(s explainedKey) bool { return s.key == k.Key }) ||
				slices.ContainsFunc(out, func(o declaredKey) bool { return o.doc.Key == k.Key }) || skip(k) {
				continue
			}
			out = append(out, declaredKey{name: name, doc: k})
		}
	}
	return out
}

// serverKeys are the provider keys of a listening address: the kernel
// refuses their method-level forms at export.
var serverKeys = kernel.ServerKeys()

// keyDispatcher is the provider URL key that chooses where the provider
// runs requests (kernel/export.go keyDispatcher, Dubbo's "dispatcher").
const keyDispatcher = "dispatcher"

// dispatchers are the values of keyDispatcher, the default first.
var dispatchers = kernel.Dispatchers()

// explained holds the URLs of one explanation (see the comment above).
type explained struct {
	given    spi.URL // the explained URL as given
	consumer spi.URL // given + the config's reference
	fromRef  []string
	provider spi.URL // --provider, or protocol < services[svc].params < given
	merged   spi.URL // spi.MergeURL(provider, consumer)
	flagged  bool    // provider came from --provider
	direct   bool    // given names its hosts and there is no --provider: merged is the consumer's own URL
	cfg      config.Config
	file     string // configuration file ("" none): errors about its keys name it
	svc      int    // index in cfg.Services of the explained interface, -1 none

	// A service key without --provider: the registry call would use
	// (useRegistry) and the providers it lists now; with any, provider
	// is the first (and flagged is set: the configuration does not make
	// it), else lookupErr says why there is none.
	registry  string
	providers []spi.URL
	lookupErr error
	// cached says the registry answered from its file.cache, ZooKeeper
	// being unreachable (nil: a live answer, or a registry without one).
	cached *zookeeper.CacheNote

	tlsErr error // the consumer's TLS keys and the provider's tls (checkTLS)
	// ignored are the consumer URL's keys the reference ignores with a
	// warning naming their malformed value (ignoreMalformedProviderKeys):
	// the checks leave them out.
	ignored []string
}

// newExplained builds the URLs of raw (and rawProvider, "" none) under cfg.
//
// raw takes call's SERVICE_URL forms (parseServiceKey): a URL, or a bare
// service key "[group/]interface[:version][?k=v]" that names no host and
// so is found in the registry.
func newExplained(cfg config.Config, file, raw, rawProvider string) (*explained, error) {
	u, err := parseServiceKey(raw)
	if err != nil {
		return nil, fmt.Errorf("list --explain: %w", err)
	}
	x := &explained{given: u, cfg: cfg, file: file, svc: -1}
	// The configuration's reference of this interface gives defaults; the
	// URL's own parameters win, also over the reference's method-level
	// forms of their keys (applyReference, as call and bench apply it).
	x.consumer, x.fromRef = applyReference(cfg, u, u.Params())
	if rawProvider != "" {
		if x.provider, err = spi.Parse(rawProvider); err != nil {
			return nil, fmt.Errorf("list --provider: %w", err)
		}
		x.flagged = true
	} else {
		// As serve exports it: protocol, then the service's params, then
		// the explained URL's keys (as -p).
		svc := config.Service{Interface: u.Path()}
		for i, s := range cfg.Services {
			if s.Interface == u.Path() {
				svc, x.svc = s, i
				break
			}
		}
		params := map[string]string{}
		for k, v := range cfg.Protocol {
			params[k] = v
		}
		for k, v := range svc.Params {
			params[k] = v
		}
		x.provider = u.WithParams(params).WithParams(u.Params())
	}
	x.direct = !x.flagged && x.consumer.Host() != "" // a reference's url (plugins.yaml) names hosts too
	if x.direct {
		// As the direct registry lists the providers (the reference URL
		// without side and backup), merged with the reference; useDirect
		// asks that registry itself.
		x.merged = spi.MergeURL(x.consumer.Without(spi.KeySide, spi.KeyBackup), x.consumer)
	} else {
		x.merged = spi.MergeURL(x.provider, x.consumer)
	}
	return x, nil
}

// lookupTimeout bounds list --explain's look-up of a service key's
// providers: a registry without a session (ZooKeeper down) would make it
// wait up to its connect timeout.
const lookupTimeout = 3 * time.Second

// useRegistry looks up the providers of a service key explained without
// --provider in the registry call would use (the configuration's, else
// the default), as the consumer's directory would list them. When there
// are any, the first provider's URL as published is the provider URL the
// explanation merges (the consumer's keys winning), as each provider
// invoker does, instead of the one serve with this configuration would
// publish: the calls use what the providers publish (transport, tls,
// codec, timeout, methods...). Without any (none registered, the
// registry not reachable), the configuration's provider stays and the
// providers row says the calls depend on the providers.
func (x *explained) useRegistry(ctx context.Context, cat *extension.Catalogs) {
	if x.direct {
		x.useDirect(ctx, cat)
		return
	}
	if x.flagged {
		return
	}
	reg, desc, err := openRegistry(cat, x.cfg.Registry)
	if err == nil && reg == nil {
		err = errors.New("its extension built no registry")
	}
	if err != nil {
		x.registry, x.lookupErr = x.cfg.Registry, err
		return
	}
	x.registry = desc
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	found, err := lookupEach(ctx, reg, desc, x.consumer)
	if c, ok := reg.(cacheNoter); ok && err == nil {
		if n, ok := c.FromCache(x.consumer.ServiceKey()); ok {
			x.cached = &n
		}
	}
	_ = reg.Close()
	if err != nil {
		x.lookupErr = err
		return
	}
	for _, p := range found {
		if enabled, err := p.Bool("enabled", true); p.Scheme() == kernel.Protocol && (err != nil || enabled) {
			x.providers = append(x.providers, p)
		}
	}
	if len(x.providers) == 0 {
		return
	}
	x.provider, x.flagged, x.svc = x.providers[0], true, -1
	x.merged = spi.MergeURL(x.provider, x.consumer)
}

// useDirect merges, for a direct URL, the first provider URL the kernel's
// "direct" registry makes from it (as Refer lists them: the reference's
// keys without side, backup and the providers' own weight, warmup and
// timestamp) with the URL, as each provider invoker does. When that
// registry cannot list them (a bad address: the checks say so), the
// URL merged with itself stays.
func (x *explained) useDirect(ctx context.Context, cat *extension.Catalogs) {
	b, err := cat.Registry.Get("direct")
	if err != nil {
		return
	}
	reg, err := b.Build(x.consumer)
	if err != nil || reg == nil {
		return
	}
	defer reg.Close()
	if ps, err := reg.Lookup(ctx, x.consumer); err == nil && len(ps) > 0 {
		x.merged = spi.MergeURL(ps[0], x.consumer)
	}
}

// rowsURL is the URL whose methods get their own rows (explainedMethods):
// the merged URL, but with registry providers only the methods the
// consumer's keys name (its "methods", its method-level keys), not every
// method the provider lists (the providers row names those).
func (x *explained) rowsURL() spi.URL {
	if len(x.providers) == 0 {
		return x.merged
	}
	u := x.merged.Without(spi.KeyMethods)
	if v, ok := x.consumer.Param(spi.KeyMethods); ok {
		u = u.With(spi.KeyMethods, v)
	}
	return u
}

// methodKeyWarnings warns about each method-level key of the consumer URL
// naming a method the service does not have, as the consumer warns of it
// and ignores it, and returns those keys too (unknownKeys leaves them).
// Against the methods the provider lists in its "methods" (a registry
// provider's or --provider's: kernel.Node.CheckMethodKeys, the check
// Export refuses such keys with; Refer warns at the first provider
// listing them), else against the URL's own "methods" on a direct URL
// (its providers' URLs are its own; unknownKeys words a Dubbo key of an
// exported name there: "methods=Echo does not list Sleep"), else, the methods being unknown,
// only a name no service can have ("sleep.timeout": a service's methods
// are exported Go names; kernel.Node.CheckMethodNames, what Refer warns
// of on a direct reference).
func (x *explained) methodKeyWarnings(cat *extension.Catalogs) (warns, keys []string) {
	node := kernel.NewNode(cat)
	methods, whose := x.provider.Methods(), "the provider's methods"
	if !x.flagged {
		methods = nil
	} else if len(x.providers) > 0 {
		whose = "provider " + x.provider.Address() + "'s methods"
	}
	own := false // the URL's own "methods": unknownKeys words its Dubbo keys of exported names
	if len(methods) == 0 && x.direct {
		methods, whose, own = x.consumer.Methods(), "the methods the URL lists", true
	}
	check := func(u spi.URL) error { return node.CheckMethodNames(u) }
	if len(methods) > 0 {
		check = func(u spi.URL) error { return node.CheckMethodKeys(u, methods) }
	} else {
		whose = "the service's methods are not known here"
	}
	// Each key alone (with what names the service), to know which keys
	// the warnings are about.
	u := x.consumer.Without(spi.KeyMethods)
	var others []string
	for _, k := range u.Keys() {
		if k != spi.KeyGroup && k != spi.KeyVersion && k != spi.KeyInterface {
			others = append(others, k)
		}
	}
	base := u.Without(others...)
	for _, k := range others {
		if m, _, dotted := strings.Cut(k, "."); own && dotted && exportedName(m) {
			continue // "has no effect: methods=Echo does not list Sleep"
		}
		v, _ := u.Param(k)
		for _, e := range unjoin(check(base.With(k, v))) {
			if e == nil {
				continue
			}
			warns = append(warns, fmt.Sprintf("%v (%s; the consumer ignores the key)", e, whose))
			keys = append(keys, k)
		}
	}
	return warns, keys
}

// lookupEach is reg's Lookup of every service key consumer takes (one,
// or those of group=a,b or group=*: directory.ServiceKeys), as its
// directory would list them.
func lookupEach(ctx context.Context, reg spi.Registry, desc string, consumer spi.URL) ([]spi.URL, error) {
	keys, err := directory.ServiceKeys(ctx, reg, desc, consumer)
	if err != nil {
		return nil, err
	}
	var found []spi.URL
	for _, k := range keys {
		ps, err := reg.Lookup(ctx, k)
		if err != nil {
			return nil, err
		}
		found = append(found, ps...)
	}
	return found, nil
}

// providersRow says which providers the explanation merged, for a
// service key without --provider: those the registry lists (each with
// its transport, and tls when on), or why the provider side is the one
// serve with this configuration would publish ("" with --provider and
// for a direct URL). A list the ZooKeeper registry answered from its
// file.cache is said to be one, with its age, as registry ls says it:
// "1 in zookeeper://h:2181, cached list saved 12s ago (ZooKeeper h:2181
// unreachable for 3s: from file.cache P, which may be out of date): ...".
func (x *explained) providersRow(cat *extension.Catalogs) string {
	if x.registry == "" && x.lookupErr == nil {
		return ""
	}
	where := x.registry
	if n := x.cached; n != nil {
		age := "saved at an unknown time"
		if !n.Saved.IsZero() {
			age = "saved " + time.Since(n.Saved).Round(time.Second).String() + " ago"
		}
		where += fmt.Sprintf(", cached list %s (ZooKeeper %s unreachable for %v: from %s %s, which may be out of date)",
			age, n.Servers, n.Unreachable.Round(100*time.Millisecond), zookeeper.KeyFileCache, n.Path)
	}
	if len(x.providers) == 0 {
		why := "none now"
		switch {
		case x.lookupErr != nil:
			why = "not listed (" + x.lookupErr.Error() + ")"
		case x.cached != nil:
			why = "none"
		}
		return fmt.Sprintf("%s in %s: the provider side below is what serve with this configuration would publish; the calls merge what the providers publish (transport, tls, codec, timeout...)", why, where)
	}
	var ps []string
	for _, p := range x.providers {
		d := p.Address()
		if b, _, err := cat.Transport.Select(p, ""); err == nil {
			d += " (transport " + b.Name()
			if on, _ := p.Bool("tls", false); on {
				d += ", tls"
			}
			d += ")"
		}
		ps = append(ps, d)
	}
	out := fmt.Sprintf("%d in %s: %s", len(ps), where, strings.Join(ps, ", "))
	if ms := x.provider.Methods(); len(ms) > 0 {
		out += "; methods " + strings.Join(ms, ", ")
	}
	if len(ps) > 1 {
		out += fmt.Sprintf("; the rows merge the first (%s): each provider's invoker merges its own URL", x.providers[0].Address())
	}
	return out
}

// blame names the configuration file and key that set the key err refuses
// (configKeyError, as serve reports it), for an error about the provider
// or merged URL built from the configuration; otherwise err.
func (x *explained) blame(err error) error {
	if x.flagged {
		return err
	}
	return configKeyError(x.cfg, x.file, x.svc, unnamed(x.given.Params()), err)
}

// runExplain prints how raw selects every point and returns every problem
// found, as the commands would meet it: unknown names, Build errors,
// malformed kernel keys, a bad dispatcher. Keys that have no effect where
// they are written get a warning line on errw (a JSON record of level WARN
// under logFormat "json").
func runExplain(ctx context.Context, w, errw io.Writer, logFormat string, cat *extension.Catalogs, cfg config.Config, regFlagged bool, file, raw, rawProvider string) error {
	x, err := newExplained(cfg, file, raw, rawProvider)
	if err != nil {
		return err
	}
	x.useRegistry(ctx, cat)
	x.checkTLS()
	referWarns, referErr := kernel.NewNode(cat, kernel.WithKeySource(envKeySource(x.cfg, x.givenKeys(rawProvider)))).ReferWarnings(x.consumer)
	x.ignoreMalformedProviderKeys(referWarns)
	methods := explainedMethods(cat, x.rowsURL())
	eC, _ := cat.Explain(x.consumer, methods)
	eM, _ := cat.Explain(x.checked(), methods)
	eP, _ := cat.Explain(x.provider, nil)

	var errs []error
	report := func(err error, blame bool) {
		if err == nil {
			return
		}
		for _, e := range unjoin(err) {
			if blame {
				e = x.blame(e)
			}
			errs = append(errs, e)
		}
	}

	// The table is held until the errors are known: a URL call would
	// refuse (an extension that does not exist, with the close match; a
	// value out of bounds) gets its errors alone, not after some 80 rows
	// that cannot describe it.
	var table strings.Builder
	tw := newTable(&table)
	fmt.Fprintf(tw, "url\t%s\n", x.merged.Redacted())
	fmt.Fprintf(tw, "service\t%s\n", x.merged.ServiceKey())
	if len(methods) > 0 {
		fmt.Fprintf(tw, "methods\t%s\n", strings.Join(methods, ", "))
		if x.direct && len(x.consumer.Methods()) == 0 {
			// the consumer logs the same at info (kernel checkDirectMethodKeys)
			fmt.Fprintf(tw, "\t(not checked against the provider's methods: a direct URL lists none and the consumer learns none from its providers; methods=A,B in the URL has them checked)\n")
		}
	}
	if ps := x.providersRow(cat); ps != "" {
		fmt.Fprintf(tw, "providers\t%s\n", ps)
	}
	if x.showsPublish() {
		fmt.Fprintf(tw, "publish\t%s\n", publishRow(cfg, x.given.Path(), x.svc)) // what serve with cfg publishes
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "POINT\tSCOPE\tEXTENSION\tORIGIN\tWHY\n")
	dispDone := false
	for _, c := range eM.Points {
		if !dispDone && c.Point > keyDispatcher { // in point order
			report(x.printDispatcher(tw), true)
			dispDone = true
		}
		if c.Method != "" && !slices.Contains(perMethodPoints, c.Point) {
			continue
		}
		u, reason := x.merged, ""
		if slices.Contains(consumerPoints, c.Point) {
			c = pointChoice(eC, c.Point, c.Method)
			u = x.consumer
			reason = x.providerNotUsed(c)
			report(c.Err, false)
		} else {
			report(c.Err, !x.direct)
			if c.Method == "" { // the provider's server and export check this too
				report(pointChoice(eP, c.Point, "").Err, true)
			}
			reason = x.directNotUsed(c)
		}
		why := why(u, c.Point, c.Selection) + x.sourceNote(c.Source) + reason
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Point, scope(c.Method), c.Name, origin(c.Origin), why)
	}
	if !dispDone {
		report(x.printDispatcher(tw), true)
	}
	reg := registryChoice(cat, cfg)
	regWhy := registryWhy(cfg, regFlagged)
	if x.direct {
		regWhy += "; not used by this URL: it names its providers (a direct reference)"
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", reg.Point, "node", reg.Name, origin(reg.Origin), regWhy)
	report(reg.Err, false)

	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "FILTERS\tSCOPE\tCHAIN (outermost first)\tWHY\n")
	cons, consErr := consumerChain(cat, eC, eM)
	report(consErr, false)
	prov := filterChoice(eP, spi.Provider)
	report(prov.Err, true)
	for _, f := range []extension.FilterChoice{cons, prov} {
		chain := strings.Join(f.Names, ", ")
		if chain == "" {
			chain = "(none)"
		}
		reason := "activated set"
		if f.Source != "activated" {
			v, _ := x.consumer.Param(f.Source)
			if f.Side == spi.Provider {
				v, _ = x.provider.Param(f.Source)
			}
			reason = fmt.Sprintf("key %s=%s edits the activated set", f.Source, v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Side, scope(""), chain, reason)
		u := x.consumer
		if f.Side == spi.Provider {
			u = x.provider
		}
		for _, why := range sidelessInURL(cat, u, f.Names) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", "", "", "("+why+")")
		}
	}

	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "KEYS\tSCOPE\tVALUE\tFROM\n")
	balancers := chosenBalancers(eC, methods)
	keys := x.shownKeys(balancers)
	hbUnread := x.heartbeatKeysUnread(cat)
	report(referErr, false)
	marks := referMarks(referWarns, hbUnread)
	for _, spec := range keys {
		u, side := x.merged, "merged"
		switch {
		case slices.Contains(consumerKeys, spec.key):
			u, side = x.consumer, "consumer"
		case slices.Contains(providerKeys, spec.key):
			u, side = x.provider, "provider"
		}
		scopes := []string{""}
		if slices.Contains(perMethodKeys, spec.key) {
			scopes = append(scopes, methods...)
		}
		// A node key (shutdown.timeout) of the reference has no effect
		// (Refer warns, kind "node"): the row is the node's own, not the
		// explained URL's taken as serve's -p (the mark below says so).
		node := marks[spec.key].Kind == "node"
		for _, m := range scopes {
			v, key, ok := u.MethodParam(m, spec.key)
			if spec.key == keyRetries {
				v, key, ok = x.clusterValue(m, spec.key)
			}
			var from string
			if node && !x.flagged {
				v, from, ok = x.exportParam(spec.key)
				key = spec.key
			}
			switch {
			case !ok && m == "" && spec.key == "shutdown.timeout":
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), formatDuration(cfg.Shutdown.Timeout), nodeFrom(cfg, spec.key))
			case !ok && m == "" && spec.key == "shutdown.wait":
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), formatDuration(cfg.Shutdown.Wait), nodeFrom(cfg, spec.key))
			case !ok && m == "" && spec.key == "heartbeat.interval" && bareHeartbeat(u) != "":
				// Dubbo's heartbeat=3000 sets the interval (ms) the strategy runs with
				hb := bareHeartbeat(u)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), readAsGiven(kernelKeyType(spec.key), hb), x.from("heartbeat", side)+" (bare number: the interval in ms)")
			case !ok && m == "":
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), readAs(kernelKeyType(spec.key), spec.def), "default")
			case ok && from != "": // a node key, as the configuration exports it
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), readAsGiven(kernelKeyType(spec.key), v), fromLabel(from, key))
			case ok && (m == "" || key != spec.key): // a method row only for a method-level key
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", spec.key, scope(m), readAsGiven(kernelKeyType(spec.key), v), x.from(key, side))
				if note := x.ownTimeoutNote(spec.key, key, m, side); note != "" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", note)
				}
				if i := slices.IndexFunc(hbUnread, func(k kernel.KeyNoEffect) bool { return k.Key == key }); i >= 0 {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(%s=%s is not used: %s)", key, v, hbUnread[i].Why))
				}
			}
			// A key of the reference Refer warns of and ignores (another
			// cluster's or balancer's, a provider's weight), as the heartbeat
			// keys above: under its row, whatever the row's value.
			cv, ckey, cok := x.consumer.MethodParam(m, spec.key)
			mark, marked := marks[ckey]
			marked = marked && cok && (side != "provider" || node) && (m == "" || ckey != spec.key)
			switch {
			case marked && node:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(%s=%s has no effect on a reference: %s)", ckey, cv, mark.Why))
			case marked:
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(%s=%s is not used: %s)", ckey, cv, mark.Why))
			}
			if pv, pkey, pok := x.provider.MethodParam(m, spec.key); side == "consumer" && x.flagged && pok && (!ok || pv != v) && (m == "" || pkey != spec.key) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(the provider's %s=%s is not used: read from the consumer's reference URL)", pkey, pv))
			}
			if spec.key == keyRetries {
				if row := x.clusterNotUsed(m, spec.key, v, key, ok); row != "" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", row)
				}
			}
			if pv, pkey, pok := x.provider.MethodParam(m, spec.key); side == "merged" && x.direct && !marked && pok && (!ok || pv != v) && (m == "" || pkey != spec.key) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", fmt.Sprintf("(the provider's %s=%s%s is not used: %s)", pkey, pv, x.configNote(pkey), directReason))
			}
		}
	}
	clusters := chosenClusters(eC, methods)
	cKeys := clusterKeys(cat, clusters, keys)
	for _, ck := range cKeys {
		if ck.doc.ServiceLevelOnly {
			x.serviceLevelRows(tw, ck, methods, kernel.NewNode(cat).ServiceLevelOnlyWhy(ck.doc.Key))
			continue
		}
		for _, m := range append([]string{""}, methods...) {
			v, key, ok := x.clusterValue(m, ck.doc.Key)
			switch {
			case !ok && m == "":
				def := ck.doc.Default
				if def == "" {
					def = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ck.doc.Key, scope(m), readAs(ck.doc.Type, def), "default ("+ck.name+")")
			case ok && (m == "" || key != ck.doc.Key):
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ck.doc.Key, scope(m), readAsGiven(ck.doc.Type, v), x.from(key, "merged"))
			}
			if row := x.clusterNotUsed(m, ck.doc.Key, v, key, ok); row != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", "", scope(m), "", row)
			}
		}
	}
	lbKeys := balancerKeys(cat, balancers, keys)
	for _, bk := range lbKeys {
		for _, m := range append([]string{""}, methods...) {
			v, key, ok := x.consumer.MethodParam(m, bk.doc.Key)
			switch {
			case !ok && m == "":
				def := bk.doc.Default
				if def == "" {
					def = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", bk.doc.Key, scope(m), readAs(bk.doc.Type, def), "default ("+bk.name+")")
			case ok && (m == "" || key != bk.doc.Key):
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", bk.doc.Key, scope(m), readAsGiven(bk.doc.Type, v), x.from(key, "consumer"))
			}
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "KEY\tMEANING\n")
	docs := kernel.KernelKeyDocs()
	for _, spec := range keys {
		if i := slices.IndexFunc(docs, func(d spi.KeyDoc) bool { return d.Key == spec.key }); i >= 0 {
			fmt.Fprintf(tw, "%s\t%s\n", spec.key, docs[i].Doc)
		}
	}
	for _, ck := range cKeys {
		fmt.Fprintf(tw, "%s\t%s (cluster %s)\n", ck.doc.Key, ck.doc.Doc, ck.name)
	}
	for _, bk := range lbKeys {
		fmt.Fprintf(tw, "%s\t%s (loadbalance %s)\n", bk.doc.Key, bk.doc.Doc, bk.name)
	}
	tw.Flush()

	methodWarns, methodKeys := x.methodKeyWarnings(cat)
	for _, k := range referWarns {
		if !explainWords(k, hbUnread) {
			methodKeys = append(methodKeys, k.Key) // Refer's words below, not "not read by airnode"
		}
	}
	warns := append(x.unknownKeys(cat, methodKeys), x.warnings(eC, eP, referWarns)...)
	warns = append(warns, methodWarns...)
	warns = append(warns, x.providerKeyWarnings()...)
	for _, k := range hbUnread {
		warns = append(warns, fmt.Sprintf("%s=%s%s has no effect: %s", k.Key, k.Value, x.keyOrigin(k.Key), k.Why))
	}
	for _, k := range referWarns {
		switch {
		case explainWords(k, hbUnread):
		case k.Kind == "baremillis":
			warns = append(warns, k.Message()) // AIRNODE_CONSUMER_TIMEOUT=5 is 5ms ..., as call warns
		case k.Kind == "fromproviders":
			warns = append(warns, fmt.Sprintf("%s=%s%s overrides every provider's %s: %s", k.Key, k.Value, x.keyOrigin(k.Key), k.Key, k.Why))
		case k.Kind == "providerside":
			warns = append(warns, fmt.Sprintf("%s=%s%s is %s", k.Key, k.Value, x.keyOrigin(k.Key), k.Why))
		default:
			warns = append(warns, fmt.Sprintf("%s=%s%s has no effect: %s", k.Key, k.Value, x.keyOrigin(k.Key), k.Why))
		}
	}
	if w := x.cfg.ReferenceMisspelt(x.given.Path()); w != "" {
		warns = append(warns, w)
	}
	tlsErr, tlsWarn := x.tlsReport()
	if tlsWarn != "" {
		warns = append(warns, tlsWarn)
	}
	serverKeysErr := x.methodServerKeys()
	if serverKeysErr != nil && x.direct {
		// A direct URL names a provider serve does not run here: call
		// and bench warn of the method-level key and go on, so the
		// explanation does too, saying what serve would do with it.
		warns = append(warns, serverKeysErr.Error()+"; call and bench ignore it, serve refuses it in a provider URL")
		serverKeysErr = nil
	}
	for _, warn := range warns {
		warnLine(errw, logFormat, "list", warn)
	}

	report(serverKeysErr, true)
	reported := errors.Join(errs...)
	report(unreported(errors.Join(config.CheckURL(x.consumer.Without(x.ignored...)), config.CheckURL(x.merged.Without(x.ignored...))), reported), false)
	report(unreported(config.CheckURL(x.provider), reported), true)
	report(tlsErr, false)
	cErr, mErr := x.consumerKeys(cat, errors.Join(errs...))
	report(cErr, false)
	report(mErr, !x.direct)
	errs = dedupeErrors(errs)
	if len(errs) > 0 {
		// A URL call would refuse gets its errors alone: after some 80
		// rows, an invalid value (hash.nodes=0) shown as an ordinary row
		// was easy to miss, as an unknown extension's name was.
		// A value of the URL's query (or --provider's) that call would
		// refuse is a usage error naming it, as call's -p
		// (commandLineKeyError).
		err := errors.Join(errs...)
		if ke := commandLineKeyError("list", x.consumer.ServiceKey(), x.givenKeys(rawProvider), err); ke != nil {
			return ke
		}
		return err
	}
	_, err = io.WriteString(w, table.String())
	return err
}

// givenKeys maps the keys of the explained URL's query, then of
// --provider's (rawProvider, "" none), to where each was given
// (commandLineKeys): "--explain URL key loadbalance=roundrobn".
func (x *explained) givenKeys(rawProvider string) map[string]givenKey {
	m := commandLineKeys(nil, nil, "--explain URL", x.given.Params())
	if rawProvider == "" {
		return m
	}
	for k, g := range commandLineKeys(nil, nil, "--provider URL", x.provider.Params()) {
		if _, ok := m[k]; !ok {
			m[k] = g
		}
	}
	return m
}

// providerKeyWarnings warns of each weight, warmup or timestamp of the
// consumer's reference URL (also a method-level form), as Refer does
// (kernel.ProviderKeysOnReference, its words): each provider sets its
// own. A malformed value is an error of the checks.
func (x *explained) providerKeyWarnings() []string {
	keys, _ := kernel.ProviderKeysOnReference(x.consumer)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s=%s%s is a provider key and has no effect on a reference: %s", k.Key, k.Value, x.keyOrigin(k.Key), k.Why))
	}
	return out
}

// explainWords reports whether list --explain words Refer's warning w
// (kernel.Node.ReferWarnings) itself, from the same kernel source:
// a misspelt key's did-you-mean and a registry's key (unknownKeys, over
// the provider URL too), a weight, warmup or timestamp
// (providerKeyWarnings), a method-level key that cannot be set per
// method (warnings: kernel.MethodKeyNoEffect) and a heartbeat
// key the merged URL's strategy ignores (hbUnread). Every other warning
// Refer gives is printed in its words: "retries=4 has no effect:
// cluster failfast does not read it; failover and forking do".
func explainWords(w kernel.URLWarning, hbUnread []kernel.KeyNoEffect) bool {
	switch w.Kind {
	case "unread", "registry", "provider", "permethod":
		return true
	case "heartbeat":
		return slices.ContainsFunc(hbUnread, func(k kernel.KeyNoEffect) bool { return k.Key == w.Key })
	}
	return false
}

// referMarks returns, by key as written, Refer's warnings of keys the
// KEYS section has a row for and that the reference's extensions or
// providers do not read (kernel.Node.ReferWarnings: another cluster's
// or balancer's key, a weight), or that are the node's (kind "node":
// shutdown.timeout): the row gets "(K=V is not used: why)", or "(K=V has
// no effect on a reference: why)" for a node key, under it. Heartbeat
// keys in hbUnread are marked from there.
func referMarks(warns []kernel.URLWarning, hbUnread []kernel.KeyNoEffect) map[string]kernel.URLWarning {
	out := map[string]kernel.URLWarning{}
	for _, w := range warns {
		switch w.Kind {
		case "cluster", "loadbalance", "heartbeat", "provider", "node":
			if !slices.ContainsFunc(hbUnread, func(k kernel.KeyNoEffect) bool { return k.Key == w.Key }) {
				out[w.Key] = w
			}
		}
	}
	return out
}

// heartbeatKeysUnread returns the service-level keys of the merged URL
// (the one each connection reads its heartbeat keys from) that its
// heartbeat strategy does not read, as Refer and Export warn of them
// (kernel.Node.HeartbeatKeysUnread): heartbeat.retries beside
// heartbeat=dual. A method-level form has no effect anyway (warnings).
func (x *explained) heartbeatKeysUnread(cat *extension.Catalogs) []kernel.KeyNoEffect {
	var out []kernel.KeyNoEffect
	for _, k := range kernel.NewNode(cat).HeartbeatKeysUnread(x.checked()) {
		if strings.HasPrefix(k.Key, extension.PointHeartbeat+".") {
			out = append(out, k)
		}
	}
	return out
}

// bareHeartbeat returns u's heartbeat value when it is Dubbo's bare
// interval in ms (heartbeat=3000), else "".
func bareHeartbeat(u spi.URL) string {
	v, _ := u.Param("heartbeat")
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return ""
	}
	return v
}

// showsPublish reports whether list --explain shows the "publish" row,
// the address serve with this configuration would publish: only when the
// provider side of the rows is that serve's, a service key whose registry
// lists no provider (or could not be read). Not for --provider, a direct
// URL (its consumer reads only its own URL; no serve of this
// configuration is involved) or a service key whose listed providers the
// rows merge.
func (x *explained) showsPublish() bool {
	return !x.flagged && !x.direct && len(x.providers) == 0
}

// consumerKeys returns the kernel's refusal of the consumer URL (an
// unknown protocol, a group or version pattern: kernel.CheckProtocol,
// directory.CheckGroupVersion) or of a key of it
// (Refer's check, kernel.CheckConsumerKeys: connections=100, a bad
// transport or heartbeat key, ...) and of the merged URL (the same check
// each provider invoker makes), each nil unless it fails and reported
// does not say the same already: a check that ends at its first error
// often ends at one the other rows found. The merged URL's error is nil
// when it is the consumer's. A consumer's TLS keys without tls=true are
// the provider's to complete: refused against a provider (--provider, or
// the registry's) that publishes no tls=true, with the error Refer gives
// such a provider (kernel.CheckProviderTLS).
func (x *explained) consumerKeys(cat *extension.Catalogs, reported error) (consumer, merged error) {
	fresh := func(err error, also error) bool {
		return err != nil && (reported == nil || !sameError(err, reported)) && (also == nil || !sameError(err, also))
	}
	// what Refer refuses before it reads a key: the protocol (not of a
	// URL merged with --provider's: a Dubbo consumer:// URL is explained
	// so) and the group and version (a pattern)
	var protocol error
	if !x.flagged {
		protocol = kernel.CheckProtocol(cat, x.consumer)
	}
	if err := errors.Join(protocol, directory.CheckGroupVersion(x.consumer), kernel.CheckConsumerKeys(cat, x.consumer)); fresh(err, nil) {
		consumer = err
	}
	if err := kernel.CheckConsumerKeys(cat, x.checked()); fresh(err, consumer) {
		merged = err
	}
	return consumer, merged
}

// checkTLS sets tlsErr when the consumer gives TLS keys (tls.ca, ...)
// without tls=true and the merged URL has no tls=true either
// (kernel.CheckProviderTLS): those keys are for the provider's tls=true
// to complete, so for a service key Refer accepts them and refuses, with
// that error, each provider publishing no tls=true. A direct URL is its
// own provider URL: the transport refuses it, as it refuses the call.
// The provider URL serve with this configuration would publish then
// leaves out the explained URL's TLS keys: they are the consumer's.
func (x *explained) checkTLS() {
	if x.direct {
		return
	}
	if x.tlsErr = kernel.CheckProviderTLS(x.consumer, x.merged); x.tlsErr == nil || x.flagged {
		return
	}
	for _, k := range []string{tlsconf.KeyCA, tlsconf.KeyCert, tlsconf.KeyKey, tlsconf.KeyServerName} {
		x.leaveOutOfProvider(k)
	}
}

// leaveOutOfProvider takes key k, when the explained URL gives it, out
// of the provider URL serve with this configuration would publish
// (newExplained folds the explained URL's keys in, as -p): the
// configuration's value (the service's params, else protocol) stays, if
// any.
func (x *explained) leaveOutOfProvider(k string) {
	if _, given := x.given.Param(k); !given {
		return
	}
	x.provider = x.provider.Without(k)
	v, ok := x.cfg.Protocol[k]
	if x.svc >= 0 {
		if sv, sok := x.cfg.Services[x.svc].Params[k]; sok {
			v, ok = sv, true
		}
	}
	if ok {
		x.provider = x.provider.With(k, v)
	}
}

// ignoreMalformedProviderKeys sets ignored to the keys of the consumer
// URL that only providers read and whose value is malformed (warns,
// ReferWarnings' kind "providerside" with Invalid set: executes=abc,
// methods.Echo.executes=-1). The reference ignores them with that
// warning, which names the value, so the explanation does too: the
// consumer and merged checks leave them out, and so does the provider
// URL serve with this configuration would publish (unless it is
// --provider's or a registry provider's), which would otherwise end the
// explanation in serve's error for a key the consumer never sends.
func (x *explained) ignoreMalformedProviderKeys(warns []kernel.URLWarning) {
	for _, w := range warns {
		if w.Kind != "providerside" || w.Invalid == "" {
			continue
		}
		x.ignored = append(x.ignored, w.Key)
		if !x.flagged {
			x.leaveOutOfProvider(w.Key)
		}
	}
}

// checked is the merged URL the merged checks build from: the merged URL,
// or with tlsErr set (reported once, by tlsReport) the merged URL as the
// consumer's TLS keys ask for it (tls=true), so that the transport row and
// checks do not repeat the mismatch in the transport's words; either
// without the keys the reference ignores (ignored).
func (x *explained) checked() spi.URL {
	u := x.merged.Without(x.ignored...)
	if x.tlsErr != nil {
		return u.With(tlsconf.KeyTLS, "true")
	}
	return u
}

// tlsReport returns tlsErr as an error against a provider URL that names
// its provider (the registry's, --provider's), as Refer refuses that
// provider, or as a warning ("" none) against the one serve with this
// configuration would publish: the calls depend on what the providers
// publish.
func (x *explained) tlsReport() (error, string) {
	if x.tlsErr == nil {
		return nil, ""
	}
	if x.merged.Host() != "" {
		return x.tlsErr, ""
	}
	var given []string
	for _, k := range []string{tlsconf.KeyCA, tlsconf.KeyCert, tlsconf.KeyKey, tlsconf.KeyServerName} {
		if v, ok := x.consumer.Param(k); ok {
			given = append(given, k+"="+v)
		}
	}
	return nil, fmt.Sprintf("%s without tls=true: used with each provider that publishes tls=true; one that publishes none is refused, and serve with this configuration would publish none", strings.Join(given, ", "))
}

// sameError reports whether err says what one of the errors joined in
// reported says: one message contains the other (the kernel's adds the
// extension that failed: "transport smux: ..."), or both refuse the same
// value of the same URL key (*spi.ParamError).
func sameError(err, reported error) bool {
	var pe *spi.ParamError
	keyed := errors.As(err, &pe)
	for _, r := range unjoin(reported) {
		if strings.Contains(err.Error(), r.Error()) || strings.Contains(r.Error(), err.Error()) {
			return true
		}
		if rpe := (*spi.ParamError)(nil); keyed && errors.As(r, &rpe) && rpe.Key == pe.Key && rpe.Value == pe.Value {
			return true
		}
	}
	return false
}

// explainedMethods returns the methods that get their own rows: those
// extension.ReferencedMethods finds (the "methods" list and
// "methods.<m>.<key>" keys), then those of Dubbo's "<m>.<key>" form for a
// key the kernel reads per method (perMethodKeys, or the key of a
// perMethodPoints point), in key order. The kernel applies "<m>.<key>"
// as it applies "methods.<m>.<key>" (spi.URL.MethodParam: for m in the
// "methods" list or, when u has none, any exported Go method name), so
// "Sleep.timeout=200&timeout=1000" calls Sleep with 200 ms.
func explainedMethods(cat *extension.Catalogs, u spi.URL) []string {
	out := extension.ReferencedMethods(u)
	perMethod := slices.Clone(perMethodKeys)
	for _, p := range cat.Describe() {
		if slices.Contains(perMethodPoints, p.Name) && p.Key != "" {
			perMethod = append(perMethod, p.Key)
		}
	}
	for _, k := range u.Keys() {
		if strings.HasPrefix(k, spi.KeyMethods+".") {
			continue // ReferencedMethods' form
		}
		if m, key, ok := methodKey(u, k); ok && slices.Contains(perMethod, key) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// pointChoice returns e's choice of point for method.
func pointChoice(e *extension.Explanation, point, method string) extension.Choice {
	for _, c := range e.Points {
		if c.Point == point && c.Method == method {
			return c
		}
	}
	return extension.Choice{Point: point, Method: method}
}

// filterChoice returns e's service-level filter chain of side.
func filterChoice(e *extension.Explanation, side spi.Side) extension.FilterChoice {
	for _, f := range e.Filters {
		if f.Side == side && f.Method == "" {
			return f
		}
	}
	return extension.FilterChoice{Side: side, Source: "activated"}
}

// consumerChain is the consumer's filter chain as the kernel builds it:
// the reference's filters from the consumer URL (eC), then each provider
// invoker's per-provider filters from the merged URL (eM), outermost
// first (kernel/filter.go filters, invokerFilters).
func consumerChain(cat *extension.Catalogs, eC, eM *extension.Explanation) (extension.FilterChoice, error) {
	perProvider := func(name string) bool {
		f, err := cat.Filter.Get(name)
		return err == nil && f.Activation().PerProvider
	}
	c, m := filterChoice(eC, spi.Consumer), filterChoice(eM, spi.Consumer)
	out := extension.FilterChoice{Side: spi.Consumer, Source: c.Source}
	for _, n := range c.Names {
		if !perProvider(n) {
			out.Names = append(out.Names, n)
		}
	}
	for _, n := range m.Names {
		if perProvider(n) {
			out.Names = append(out.Names, n)
		}
	}
	return out, errors.Join(c.Err, m.Err)
}

// printDispatcher prints the dispatcher row, chosen from the provider URL,
// and returns the kernel's error for a value it refuses, worded as the
// kernel words it (kernel/export.go serverFor).
func (x *explained) printDispatcher(tw io.Writer) error {
	sel := extension.Selection{Name: dispatchers[0], Source: extension.SourceDefault}
	if v, ok := x.provider.Param(keyDispatcher); ok {
		sel = extension.Selection{Name: v, Source: keyDispatcher}
	}
	orig := "kernel"
	_, err := kernel.Dispatcher(x.provider)
	if err != nil {
		orig = "(unknown value)"
	}
	reason := why(x.provider, keyDispatcher, sel) + ", provider side" + x.providerSource(sel.Source)
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", keyDispatcher, scope(""), sel.Name, orig, reason)
	return err
}

// methodServerKeys returns the kernel's refusal of a method-level server
// key in the provider URL (kernel/export.go noMethodServerKeys): a server
// serves every method alike.
func (x *explained) methodServerKeys() error { return kernel.CheckServerKeys(x.provider) }

// sourceNote says where a key of the consumer or merged URL came from
// when not from the explained URL itself.
func (x *explained) sourceNote(source string) string {
	if slices.Contains(x.fromRef, source) {
		from := x.refFrom(source)
		if strings.HasPrefix(from, "env ") {
			return ", from " + from
		}
		return ", from the config's " + from
	}
	if _, ok := x.given.Param(source); ok || x.flagged || x.direct {
		return ""
	}
	return x.providerSource(source)
}

// providerSource says which configuration key set a provider URL key that
// the explained URL does not set ("" when it does, or with --provider).
func (x *explained) providerSource(key string) string {
	if _, ok := x.given.Param(key); ok || x.flagged || key == extension.SourceDefault {
		return ""
	}
	if _, from, ok := x.exportParam(key); ok {
		if strings.HasPrefix(from, "env ") {
			return ", from " + from
		}
		return ", from the config's " + from
	}
	return ""
}

// exportParam returns the value of key serve with the configuration
// exports the explained interface with before the explained URL's keys
// (-p): services[svc].params', else protocol's, and which of them
// ("services[0].params", "protocol", or "env AIRNODE_PROVIDER_WEIGHT"
// for the variable that set protocol's, config.ProtocolSource); ok false
// when neither sets it.
func (x *explained) exportParam(key string) (v, from string, ok bool) {
	if x.svc >= 0 {
		if v, ok := x.cfg.Services[x.svc].Params[key]; ok {
			return v, fmt.Sprintf("services[%d].params", x.svc), true
		}
	}
	if v, ok := x.cfg.Protocol[key]; ok {
		if name, env := x.cfg.ProtocolSource(key); env {
			return v, "env " + name, true
		}
		return v, "protocol", true
	}
	return "", "", false
}

// refFrom names where the consumer URL key key that the configuration
// added (fromRef) came from: "reference" (the references: entry's
// params), "env AIRNODE_CONSUMER_TIMEOUT" (the variable,
// config.ConsumerSource) or "consumer section" (the file's consumer:).
func (x *explained) refFrom(key string) string {
	if _, ok := x.cfg.ReferenceParams(x.given.Path())[key]; ok {
		return "reference"
	}
	if name, env := x.cfg.ConsumerSource(key); env {
		return "env " + name
	}
	return "consumer section"
}

// fromLabel is the FROM of a KEYS row for key set by from, a
// configuration key ("protocol (weight)") or a variable, which names the
// key itself ("env AIRNODE_PROVIDER_WEIGHT").
func fromLabel(from, key string) string {
	if strings.HasPrefix(from, "env ") {
		return from
	}
	return from + " (" + key + ")"
}

// nodeFrom is the FROM of the KEYS row of the node's own shutdown.timeout
// or shutdown.wait (key): "env AIRNODE_SHUTDOWN_TIMEOUT" or "flag
// --shutdown-timeout" when one set it (config.Config.SettingSource), else
// "node (key)".
func nodeFrom(cfg config.Config, key string) string {
	if src := cfg.SettingSource(key); strings.HasPrefix(src, "env ") || strings.HasPrefix(src, "flag ") {
		return src
	}
	return "node (" + key + ")"
}

// providerNotUsed notes a provider value of a consumer point that the
// consumer does not use (it builds cluster and load balancer from its own
// reference URL, kernel/refer.go build). For a direct URL the provider
// URL holds the explained URL's own keys (newExplained folds them in, as
// serve's -p): those are the consumer's, and only a value the
// configuration alone gives the provider is noted (directNotUsed).
func (x *explained) providerNotUsed(c extension.Choice) string {
	if x.direct {
		return x.directNotUsed(c)
	}
	v, key, ok := x.provider.MethodParam(c.Method, c.Point)
	if !ok || v == c.Name {
		return ""
	}
	src := ""
	if !x.flagged {
		src = x.configNote(key)
	}
	return fmt.Sprintf("; the provider's %s=%s%s is not used: the consumer chooses %s from its own reference URL", key, v, src, c.Point)
}

// directReason says why a provider value does not reach the consumer of
// a direct URL.
const directReason = "a direct URL names its provider, and its consumer reads every key from its own URL"

// directNotUsed notes, for a direct URL, a provider value of a point the
// consumer reads from its own URL (transport, codec, heartbeat): the
// config's protocol sets it for serve only.
func (x *explained) directNotUsed(c extension.Choice) string {
	if !x.direct {
		return ""
	}
	v, key, ok := x.provider.MethodParam(c.Method, c.Point)
	if mv, _, mok := x.merged.MethodParam(c.Method, c.Point); !ok || mok && mv == v {
		return ""
	}
	return fmt.Sprintf("; the provider's %s=%s%s is not used: %s", key, v, x.configNote(key), directReason)
}

// configNote names the configuration key that set provider URL key key,
// " (config protocol)" or " (config services[i].params)", or "".
func (x *explained) configNote(key string) string {
	s := x.providerSource(key)
	if from, ok := strings.CutPrefix(s, ", from env "); ok {
		return " (env " + from + ")"
	}
	if s == "" {
		return ""
	}
	return " (config" + strings.TrimPrefix(s, ", from the config's") + ")"
}

// fromServiceURL labels, in the KEYS table's FROM, a key the explained
// URL itself sets (list --explain's SERVICE_URL argument, its query):
// "SERVICE_URL query (timeout)", never to be taken for the configuration's
// consumer: section ("consumer section (retries)") or a provider's value
// ("provider (retries)").
const fromServiceURL = "SERVICE_URL query"

// from names the origin of key of the URL side ("consumer", "provider",
// "merged") for the KEYS table: "SERVICE_URL query (K)" (the explained
// URL), "reference (K)", "consumer section (K)", "env
// AIRNODE_CONSUMER_K", "protocol (K)", "services[i].params (K)", and with
// --provider or providers found in the registry "provider (K)", or for
// filters set on both sides "provider + " and the consumer's label.
func (x *explained) from(key, side string) string {
	_, inC := x.consumer.Param(key)
	_, inP := x.provider.Param(key)
	if side == "merged" && x.direct {
		side = "consumer"
	}
	if side == "merged" {
		switch {
		case key == spi.KeyFilter && inC && inP && x.flagged:
			return "provider + " + x.consumerFrom(key)
		case inP && (!inC || slices.Contains(providerOwned, key)):
			side = "provider"
		default:
			side = "consumer"
		}
	}
	switch {
	case side == "consumer":
		return x.consumerFrom(key)
	case x.flagged:
		return side + " (" + key + ")"
	case side == "provider":
		if _, from, ok := x.exportParam(key); ok && x.providerSource(key) != "" {
			return fromLabel(from, key)
		}
	}
	return fromServiceURL + " (" + key + ")"
}

// ownTimeoutNote is the row under a timeout row of method m whose value
// is the provider's method-level key (key "Sleep.timeout", which Dubbo's
// order puts above the consumer's service-level timeout): what call and
// bench do with --timeout, each call's own timeout that beats it
// (ownTimeout, tester90 #1). "" for any other row.
func (x *explained) ownTimeoutNote(spec, key, m, side string) string {
	if spec != "timeout" || m == "" || key == spec || side != "merged" || x.direct {
		return ""
	}
	_, inC := x.consumer.Param(key)
	_, inP := x.provider.Param(key)
	if inC || !inP {
		return ""
	}
	return fmt.Sprintf("(a call's own timeout beats it: call --timeout D and bench --timeout D, a Go caller's %q attachment; -p timeout= does not)", spi.AttachmentTimeout)
}

// consumerFrom names the origin of key of the consumer URL: the
// configuration's reference, consumer: section or variable that added it
// (refFrom), else the explained URL's query.
func (x *explained) consumerFrom(key string) string {
	if slices.Contains(x.fromRef, key) {
		return fromLabel(x.refFrom(key), key)
	}
	return fromServiceURL + " (" + key + ")"
}

// providerOwned are the keys spi.MergeURL always takes from the provider.
var providerOwned = []string{"timestamp", "weight", "warmup", spi.KeyMethods, spi.KeyGroup, spi.KeyVersion, "token"}

// warnings lists the method-level keys that the kernel reads only per
// connection, provider or service, so they have no effect, and the
// method filter chains that would differ from the service's (the kernel
// builds one chain per service and side). A method-level weight, warmup
// or timestamp of the reference is left to providerKeyWarnings (refer:
// Refer's warnings).
func (x *explained) warnings(eC, eP *extension.Explanation, refer []kernel.URLWarning) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range refer {
		if w.Kind == "provider" {
			seen[w.Key] = true // providerKeyWarnings, in Refer's words
		}
	}
	for _, u := range []spi.URL{x.consumer, x.provider} {
		for _, k := range u.Keys() {
			_, key, ok := methodKey(u, k)
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			if _, inP := x.provider.Param(k); inP && slices.Contains(serverKeys, key) {
				continue // refused as an error (methodServerKeys)
			}
			why := kernel.MethodKeyNoEffect(key)
			if why == "" {
				continue
			}
			v, _ := u.Param(k)
			out = append(out, fmt.Sprintf("%s=%s has no effect: %s", k, v, why))
		}
	}
	for _, side := range []struct {
		e *extension.Explanation
		s spi.Side
	}{{eC, spi.Consumer}, {eP, spi.Provider}} {
		service := filterChoice(side.e, side.s).Names
		for _, f := range side.e.Filters {
			if f.Side != side.s || f.Method == "" || slices.Equal(f.Names, service) || strings.Contains(f.Source, ".") {
				continue // the service chain, the same chain, or a method-level filter key already warned about
			}
			out = append(out, fmt.Sprintf("method %s: a method-level key would change its %s filter chain to %q, but the kernel builds one chain per service from service-level keys: it has no effect",
				f.Method, f.Side, strings.Join(f.Names, ", ")))
		}
	}
	return out
}

// unknownKeys warns about each key of the explained URLs that only a
// registry reads (kernel.RegistryKeys: poll, root, ...: read from the
// registry URL, it does nothing on a service URL), and each that neither
// airnode nor any extension of cat reads: a plugin's key, another tool's,
// or a misspelling, which then gets the key meant: kernel.UnreadKeys, in
// its words, the warning Refer and Export give. A method-level form
// is judged by its key ("methods.Echo.foo" by foo). The kernel does not
// refuse such keys: URLs carry keys of plugins and other tools. A Dubbo
// method key for a method the URL's "methods" leaves out
// ("methods=Echo&Sleep.timeout=200") is named as having no effect. Keys in
// warned are left out: methodKeyWarnings or a Refer warning says more.
func (x *explained) unknownKeys(cat *extension.Catalogs, warned []string) []string {
	known := kernel.KnownKeys(cat)
	registryOnly := kernel.RegistryKeys(cat)
	var out []string
	seen := map[string]bool{}
	for _, k := range warned {
		seen[k] = true // methodKeyWarnings or a Refer warning says more
	}
	for _, u := range []spi.URL{x.consumer, x.provider} {
		unread := map[string]kernel.UnreadKey{}
		for _, k := range kernel.UnreadKeys(cat, u) {
			unread[k.Key] = k
		}
		for _, k := range u.Keys() {
			if seen[k] {
				continue
			}
			seen[k] = true
			if names, ok := registryOnly[k]; ok {
				v, _ := u.Param(k)
				out = append(out, fmt.Sprintf("%s=%s%s has no effect on a service URL: it is a key of the %s registry, read from the registry URL only (--registry, or the config's registry)",
					k, v, x.keyOrigin(k), strings.Join(names, ", ")))
				continue
			}
			key := k
			if _, mk, ok := methodKey(u, k); ok {
				key = mk
			}
			if slices.Contains(known, key) {
				continue
			}
			v, _ := u.Param(k)
			if m, after, ok := strings.Cut(key, "."); ok && slices.Contains(known, after) {
				// Dubbo's "<method>.<key>", as the kernel counts it; applied
				// only to a method the URL's "methods" lists, if it lists any.
				if ms := u.Methods(); key == k && len(ms) > 0 && exportedName(m) {
					out = append(out, fmt.Sprintf("%s=%s%s has no effect: methods=%s does not list %s (methods.%s.%s applies anyway)",
						k, v, x.keyOrigin(k), strings.Join(ms, ","), m, m, after))
				}
				continue
			}
			if uk, ok := unread[k]; ok {
				out = append(out, fmt.Sprintf("%s=%s%s %s", k, v, x.keyOrigin(k), uk.Words()))
			}
		}
	}
	return out
}

// keyOrigin names the configuration key that set URL key k when the
// explained URL does not: " (config reference)", " (config protocol)",
// " (config services[i].params)", or "".
func (x *explained) keyOrigin(k string) string {
	if _, ok := x.given.Param(k); ok {
		return ""
	}
	if slices.Contains(x.fromRef, k) {
		from := x.refFrom(k)
		if strings.HasPrefix(from, "env ") {
			return " (" + from + ")"
		}
		return " (config " + from + ")"
	}
	return x.configNote(k)
}

// methodKey splits a method-level key of u as spi.URL.MethodParam reads
// it: "methods.<m>.<key>", or "<m>.<key>" for m in u's "methods" or, when
// u has none, an exported Go method name: spi.MethodLevelKey, the one
// rule the kernel, MergeURL and the registry entries use (tester74).
func methodKey(u spi.URL, k string) (method, key string, ok bool) {
	return spi.MethodLevelKey(k, u.Methods())
}

// exportedName reports whether s can name an exported Go method.
func exportedName(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) && !strings.Contains(s, ".")
}

// dedupeErrors drops errors whose message repeats an earlier one.
func dedupeErrors(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, err := range errs {
		if s := err.Error(); !seen[s] {
			seen[s] = true
			out = append(out, err)
		}
	}
	return out
}

// unnamed maps each key of params to "": keys configKeyError leaves for
// the caller to name (list --explain's SERVICE_URL query, whose keys win
// over the configuration's).
func unnamed(params map[string]string) map[string]string {
	m := make(map[string]string, len(params))
	for k := range params {
		m[k] = ""
	}
	return m
}

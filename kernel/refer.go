package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Reference is the consumer's handle on one service: calls go through the
// consumer filters, the cluster, the directory (fed by the registry), the
// load balancer and a remote invoker. Safe for concurrent use.
// A Reference comes from Node.Refer only: the methods of a nil *Reference
// panic (nil pointer dereference; they do not check, being on every
// call's path), and those of a zero Reference fail or panic too.
type Reference struct {
	node    *Node
	url     spi.URL
	key     string
	dir     *directory.Directory
	reg     spi.Registry // owned by the reference when direct; nil otherwise
	invoker spi.Invoker  // filters + cluster
	base    *strategy
	uniform bool     // no method-level cluster or loadbalance key: every method uses base
	methods sync.Map // method -> *strategy or error
	once    sync.Once

	methodKeysChecked sync.Once // checkMethodKeys, against the first provider listing methods

	closed atomic.Bool   // Close began: calls fail CLIENT_ERROR (closedError)
	done   chan struct{} // closed when Close begins: the waits (WaitAvailable, WaitReady, WaitSettled) end

	// settled: the first connection attempts to the providers have all
	// ended once (awaitSettled); calls of an affinity balancer no longer wait.
	settled atomic.Bool

	listed signal // broadcast at every change of the provider list (WaitAvailable)

	shared   spi.Registry // the node's registry this reference registered in
	regName  string       // the name (URL scheme) of reg or shared, for errors
	consumer spi.URL      // its consumer entry there (zero: none)

	warns *connectWarns // its providers' first-connection failure lines, bounded (connectwarns.go); nil before the directory
}

// consumerEntry is reference URL u without what a consumer entry must
// not publish to everyone who reads the registry: its secrets (token,
// Echo.token, keys an extension declared secret: spi.IsSecretKey), which
// a reference through a registry does not even use, and the paths of its
// TLS files (where it keeps its private key), as a provider's entry
// leaves out its own (tester68 F1, F2).
func consumerEntry(u spi.URL) spi.URL {
	drop := slices.Clone(tlsconf.ProviderFileKeys)
	for _, k := range u.Keys() {
		if spi.IsSecretKey(k) {
			drop = append(drop, k)
		}
	}
	return u.Without(drop...)
}

// register publishes the reference's consumer entry (Dubbo's
// consumer://host/interface?side=consumer...) in reg, so registry
// listings show who consumes a service. A failure is logged, not fatal: at
// debug level when the registry does not keep consumer entries
// (spi.ErrNotSupported, an expected answer), else as a warning.
func (r *Reference) register(ctx context.Context, reg spi.Registry) {
	cu := r.node.registryEntry(consumerEntry(r.url).WithScheme("consumer").WithAddress("127.0.0.1", 0).
		WithParams(map[string]string{"pid": strconv.Itoa(pid), "timestamp": strconv.FormatInt(r.node.now().UnixMilli(), 10)}))
	step := fmt.Sprintf("registry %q Register of the consumer entry of %s", r.regName, r.key)
	unregister := func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		_ = reg.Unregister(uctx, cu)
	}
	if err := withinUndo(ctx, r.node.logger, "refer "+r.key, step, func() error { return reg.Register(ctx, cu) }, unregister); err != nil {
		if errors.Is(err, spi.ErrNotSupported) {
			r.node.logger.Debug("registry keeps no consumer entries", "service", r.key, "err", err)
		} else {
			r.node.logger.Warn("cannot register consumer", "service", r.key, "err", err)
		}
		return
	}
	r.shared, r.consumer = reg, cu
}

// strategy is the cluster and balancer one method uses.
type strategy struct {
	cluster     spi.Cluster
	lb          spi.LoadBalance
	clusterName string
	lbName      string
}

// Refer returns a reference to u's service. The providers come from u's
// own hosts through the "direct" registry when u has any
// (airnode://h1:p1,h2:p2/demo.Echo: one provider per host; as Dubbo's
// direct url, registries are then not used), else from registryURL when it
// is set, else from the node's registry (WithRegistry). A direct
// reference reads no provider URL: each provider's URL is u itself, so
// the keys a consumer takes from its providers through a registry as its
// defaults (spi.MergeURL: timeout, payload, codec, retries, idempotent,
// ...) come from u or the defaults only; a provider's timeout=300ms,
// payload=32MiB or codec=json does not reach it: give them in u. u's
// shutdown.timeout and shutdown.wait have no effect (a warning each):
// they are the node's (WithShutdownTimeout, WithShutdownWait). The cluster and
// load balancer are chosen by u's keys ("cluster", "loadbalance"), built
// once, and again per method where method-level keys select others. The
// consumer filter chain is built here, plugin filters included (their
// plugin builds them, within pluginrpc.DefaultFilterBuildTimeout): a
// filter that cannot be built fails Refer, naming it ("kernel: refer
// demo.Echo: filter "acme.authz": ..."), not every call. A group or
// version of "*" or a list ("a,b"), Dubbo's any and multi-group
// references, are supported through a registry, as Dubbo's reference
// without a merger: the providers of every service key that fits are
// listed together and each call goes to one of them, under its own
// service key (with "*", keys that appear later join within
// directory.RescanInterval). Refer refuses them on a direct reference,
// and refuses a pattern ("a*") or an empty item ("a,,b"). A Dubbo key
// airnode does not implement (mock, async, check, serialization, stub,
// sticky, ...) is ignored with a warning naming it and what to use
// instead, as a misspelt key gets a did-you-mean; a Dubbo cluster or
// balancer airnode lacks (failback, broadcast, adaptive, ...) fails
// Refer saying what to choose instead.
//
// ctx bounds the registry calls Refer waits on, whether they honour it or
// not: the registry's Build (on the node's first use of that registry
// URL, as Export's: without the node's lock, one Build per registry URL
// shared by the callers that need it), its Subscribe and the consumer
// entry's Register. A Build or Subscribe still running at ctx's end is
// left running and Refer fails with a *LeftRunningError naming it
// (`registry "zookeeper" Build`, `registry "zookeeper" Subscribe of
// demo.Echo`); a Register left running is logged and Refer goes on.
// When the end of ctx ended the wait, the error matches ctx's error
// (errors.Is(err, context.DeadlineExceeded), or context.Canceled), as a
// call's does, and says so, with the registry's cause when it gives one:
// "kernel: refer demo.Echo: registry "zookeeper" Subscribe of demo.Echo
// did not return before the caller's context deadline passed, after
// 300ms: zookeeper registry: no session with ...". The
// direct registry's Build (a reference with hosts), the cluster's,
// balancer's and filters' Builds are not bounded by ctx (spi's "What the
// kernel does not bound"; a plugin filter's by its plugin).
func (n *Node) Refer(ctx context.Context, u spi.URL, registryURL spi.URL) (*Reference, error) {
	ctx = withLateWindow(ctx)
	if u.Interface() == "" {
		return nil, noInterfaceError("refer", u)
	}
	if err := n.checkProtocol(u); err != nil {
		return nil, fmt.Errorf("kernel: refer %s: %w", u.ServiceKey(), err)
	}
	if err := directory.CheckGroupVersion(u); err != nil {
		return nil, fmt.Errorf("kernel: refer %s: %w", u.Interface(), err)
	}
	multi := directory.Multi(u)
	if multi && u.Host() != "" {
		var set []string // the keys given, "group=a,b", "version=*"; an empty one says nothing
		for _, k := range []string{spi.KeyGroup, spi.KeyVersion} {
			if v := u.ParamOr(k, ""); v != "" {
				set = append(set, k+"="+v)
			}
		}
		return nil, fmt.Errorf("kernel: refer %s: %s: several groups or versions (a list, or *) need a registry; a direct reference (%s) calls the providers it names in one group and version",
			u.Interface(), strings.Join(set, ", "), strings.Join(u.Addresses(), ","))
	}
	u = u.With(spi.KeySide, string(spi.Consumer))
	r := &Reference{node: n, url: u, key: u.ServiceKey(), done: make(chan struct{})}
	// Every check of u's keys runs, and Refer refuses u with all their
	// errors at once (errors.Join, one line each), rather than with the
	// first one only and the next on the next run (tester83 #5).
	var refused refusals
	base, err := r.build("")
	if err != nil {
		if h := dubboExtensionHint(u); h != "" {
			err = fmt.Errorf("%w; %s", err, h)
		}
		refused.add(err)
	}
	r.base = base
	r.uniform = !perMethod(u, n.cat.Cluster.Key(), n.cat.LoadBalance.Key())
	// The methods with a cluster or balancer of their own are built now,
	// so that an unknown name or a bad key fails Refer as the service
	// level's does (Dubbo checks at refer), rather than every call of the
	// method (tester69 finding 6).
	//
	// A URL that lists its methods (methods=A,B) has its method-level keys
	// checked against that list first: a key for a method it lacks sets
	// nothing (Dubbo ignores it), so it is warned of and not built.
	listed := u.Methods()
	if len(listed) > 0 {
		r.checkMethodKeys(u)
	}
	for _, m := range u.MethodsSetting(n.cat.Cluster.Key(), n.cat.LoadBalance.Key()) {
		if len(listed) > 0 && !slices.Contains(listed, m) {
			continue
		}
		s, err := r.build(m)
		if err != nil {
			refused.add(err)
			continue
		}
		r.methods.Store(m, s)
	}
	if err := n.checkConsumerKeys(u); err != nil {
		refused.addIn("kernel: refer "+r.key+": ", err)
	}
	// Every key it ignores, one warning each (ReferWarnings, which list
	// --explain prints too); a malformed weight, warmup or timestamp fails.
	if err := n.warnReference(u, r.key); err != nil {
		refused.addIn("kernel: refer "+r.key+": ", err)
	}
	if u.Host() != "" && len(u.Methods()) == 0 {
		r.checkDirectMethodKeys()
	}
	// The whole consumer chain is built now, plugin filters included
	// (their plugin builds them, bounded): a filter that cannot be built
	// fails Refer, not every call.
	fu := u
	if u.Host() == "" {
		// through a registry the reference's own token is not used (each
		// provider's is: spi.MergeURL), and Refer warns of it: a value
		// only a provider may give (token=true) must not fail it (tester74)
		fu = u.Without(spi.AttachmentToken)
	}
	filters, err := n.filters(fu, spi.Consumer)
	if err != nil {
		refused.addIn("kernel: refer "+r.key+": ", err)
	}
	r.invoker = chain(filters, &clusterInvoker{ref: r})
	if _, err := n.invokerFilters(fu); err != nil { // fail early on bad keys of per-provider filters
		refused.addIn("kernel: refer "+r.key+": ", err)
	}
	if err := refused.err(); err != nil {
		return nil, err
	}

	var reg spi.Registry
	desc := ""
	switch {
	case u.Host() != "":
		b, err := n.cat.Registry.Get("direct")
		if err != nil {
			return nil, fmt.Errorf("kernel: refer %s: %w", r.key, err)
		}
		if reg, err = extension.Build(extension.PointRegistry, b.Name(), func() (spi.Registry, error) { return b.Build(u) }); err != nil {
			return nil, fmt.Errorf("kernel: refer %s: %w", r.key, err)
		}
		r.reg, r.regName = reg, "direct"
		desc = "direct " + u.Without(u.Keys()...).String()
		n.warnRepeatedProviders(r.key, u)
	case !registryURL.IsZero() || !n.registryURL.IsZero():
		ru := registryURL
		if ru.IsZero() {
			ru = n.registryURL
		}
		if reg, err = n.registry(ctx, "refer "+r.key, ru); err != nil {
			return nil, err
		}
		desc, r.regName = ru.String(), ru.Scheme()
		if ru.Scheme() == "direct" {
			n.warnRepeatedProviders(r.key, ru) // --registry direct://A,A
		}
	default:
		return nil, fmt.Errorf("kernel: refer %s: no registry and no provider address (give host:port in the URL or a registry URL)", r.key)
	}
	outliers := &outlierGroup{} // the reference's providers, for outlier ejection (outlier.go)
	r.warns = newConnectWarns(n.base.With("component", "kernel"), r.key)
	// the subscription names the consumer's application as its registry
	// entry does (withApplication): the registry warns of rules for it
	r.dir = directory.New(withApplication(u), reg, desc, func(pu spi.URL) (spi.Invoker, error) {
		r.checkMethodKeys(pu)
		if err := CheckProviderTLS(u, pu); err != nil {
			// an invoker that says why, so that a call with no other
			// provider fails with it rather than "no provider available"
			n.logger.Warn("provider not used: its TLS does not fit the reference's keys", "service", r.key, "provider", pu.Address(), "err", err.Error())
			return &refusedInvoker{url: pu, err: spi.Errorf(spi.StatusClientError, "kernel: provider %s: %v", pu.Address(), err)}, nil
		}
		inv, err := newRemoteInvoker(pu, u, n.cat, &n.pool, n.base, outliers, r.warns)
		if err != nil {
			return nil, err
		}
		// a restarted provider's new entry: redial it now, not at the end of its backoff
		inv.entryArrived()
		fs, err := n.invokerFilters(pu) // per-provider filters, e.g. activelimit
		if err != nil {
			_ = inv.Close()
			return nil, fmt.Errorf("kernel: provider %s: %w", pu.Address(), err)
		}
		if multi {
			fs = append(fs, chainFilter{Filter: serviceKeyFilter(pu.ServiceKey())}) // the kernel's own: no name
		}
		return chain(fs, inv), nil
	}, n.base)
	r.dir.Hold(n.holds)
	r.dir.OnChange(r.listed.broadcast) // WaitAvailable
	// The registry's Subscribe, bounded by ctx even when it ignores it
	// (within): Refer then fails naming the registry, and the
	// subscription, if it ever returns, is stopped (Directory.Start).
	step := fmt.Sprintf("registry %q Subscribe of %s", r.regName, r.key)
	if err := n.within(ctx, "refer "+r.key, step, func() error { return r.dir.Start(ctx) }); err != nil {
		_ = r.closeOwnedWithin(ctx, "refer "+r.key)
		if left := (*LeftRunningError)(nil); errors.As(err, &left) {
			if u, ok := reg.(spi.RegistryUnreachable); ok {
				left.Why = u.Unreachable() // the cause, not only that it did not return
			}
			return nil, err
		}
		return nil, fmt.Errorf("kernel: refer %s: %w", r.key, err)
	}
	if r.reg == nil {
		// After the subscription: a registry without a session makes both
		// wait up to its connect timeout, and the provider list is what
		// the caller is waiting for (the consumer entry is informational).
		r.register(ctx, reg)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		r.closeOwned()
		return nil, errClosed
	}
	n.references = append(n.references, r)
	n.mu.Unlock()
	return r, nil
}

// noInterfaceError returns the error of Refer (op "refer") or Export (op
// "export") for u, a URL with no interface: "kernel: refer
// airnode://127.0.0.1:20880: no service interface (want
// scheme://[host:port]/interface)". When u's one host has no port and
// looks like a service name (a dot, not an IP address:
// "airnode://shop.Shop", two slashes),
// it adds the URL most likely meant: Refer's with three slashes (`; did
// you mean "airnode:///shop.Shop"? (three slashes: no host, the registry
// finds the providers)`), Export's with an address to listen on before
// the interface (`; did you mean "airnode://127.0.0.1:20880/shop.Shop"?
// ...`).
func noInterfaceError(op string, u spi.URL) error {
	want := "scheme://[host:port]/interface"
	if op == "export" {
		want = "scheme://host:port/interface"
	}
	msg := fmt.Sprintf("kernel: %s %s: no service interface (want %s)", op, u, want)
	h := u.Host()
	if len(u.Hosts()) != 1 || u.Port() != 0 || !strings.Contains(h, ".") || strings.Contains(h, ":") || net.ParseIP(h) != nil {
		return errors.New(msg)
	}
	if op == "export" {
		return fmt.Errorf("%s; did you mean %q? (the host is the address to listen on, the interface the path after it; port 0 picks a free port)",
			msg, u.WithAddress("127.0.0.1", 20880).WithPath(h).String())
	}
	return fmt.Errorf("%s; did you mean %q? (three slashes: no host, the registry finds the providers)", msg, u.WithAddress("", 0).WithPath(h).String())
}

// serviceKeyFilter is the innermost per-provider filter of a reference of
// several groups or versions (directory.Multi): it sends each call under
// the service key of the provider it goes to (a/demo.Echo:1.0), which
// the provider looks its service up by, rather than the reference's
// (*/demo.Echo), and restores the invocation's afterwards (failover
// tries other providers with it).
type serviceKeyFilter string

func (k serviceKeyFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	old := inv.Service
	inv.Service = string(k)
	res := next.Invoke(ctx, inv)
	inv.Service = old
	return res
}

// checkMethodKeys warns, once per reference, about each method-level key
// of the reference's URL naming a method that provider URL pu's "methods"
// list lacks (Node.CheckMethodKeys, the check Export refuses such a key
// with): the consumer does not know the interface, so the first provider
// that lists its methods tells. It is a warning, not an error: another
// provider may serve another version of the interface. A provider
// without "methods" is no evidence and leaves the check for the next one.
func (r *Reference) checkMethodKeys(pu spi.URL) {
	methods := pu.Methods()
	if len(methods) == 0 {
		return
	}
	r.methodKeysChecked.Do(func() {
		err := r.node.CheckMethodKeys(r.url.Without(spi.KeyMethods), methods)
		for _, e := range unjoin(err) {
			from := pu.Address() // "": the methods a registry reference's own URL lists
			if from == "" {
				from = "reference URL"
			}
			r.node.logger.Warn("method-level URL key names no method of the provider (ignored)", "service", r.key, "provider", from, "err", e.Error())
		}
	})
}

// checkDirectMethodKeys is checkMethodKeys for a direct reference whose
// URL lists no "methods": its providers' URLs are its own, so they list
// none either, and the consumer learns no method list from a provider
// (the connection's hello carries heartbeat keys only). It warns, once,
// at Refer, of each method-level key naming a method no service can have
// (CheckMethodNames: "sleep.timeout", did you mean "Sleep"?), in the
// words of checkMethodKeys' warning, and says at info level which keys
// it cannot check (Nope.timeout): methods=A,B in the URL has them
// checked against that list instead, when the direct registry lists the
// providers during Refer (checkMethodKeys).
func (r *Reference) checkDirectMethodKeys() {
	for _, e := range unjoin(r.node.CheckMethodNames(r.url)) {
		r.node.logger.Warn("method-level URL key names no method of the provider (ignored)", "service", r.key, "provider", "direct", "err", e.Error())
	}
	if keys := r.node.uncheckedMethodKeys(r.url); len(keys) > 0 {
		r.node.logger.Info("method-level URL keys not checked against the provider's methods: a direct reference does not learn them; list them in the URL (methods=A,B) to have each key checked",
			"service", r.key, "keys", strings.Join(keys, ","))
	}
}

// refusals collects the errors Refer refuses a URL with, each once (a
// bad service-level key can fail a method's build too, in the same words).
type refusals []error

// add records each error err joins (errors.Join, nested too), or err,
// unless an error with its text is recorded already.
func (rs *refusals) add(err error) { rs.addIn("", err) }

// addIn is add with each error wrapped after prefix ("kernel: refer
// demo.Echo: "), so that every line says where it is from.
func (rs *refusals) addIn(prefix string, err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			rs.addIn(prefix, e)
		}
		return
	}
	if prefix != "" {
		err = fmt.Errorf("%s%w", prefix, err)
	}
	for _, e := range *rs {
		if e.Error() == err.Error() {
			return
		}
	}
	*rs = append(*rs, err)
}

// err returns nil for none, the one error unchanged, or every error
// joined (errors.Join: one per line; errors.As finds each).
func (rs refusals) err() error {
	if len(rs) == 1 {
		return rs[0]
	}
	return errors.Join(rs...)
}

// unjoin returns the errors errors.Join joined into err, err alone, or
// none for nil.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Protocol is the one protocol airnode speaks: the scheme of every provider
// URL and of a reference's URL. Registry URLs have their own
// schemes (zookeeper://, file://, ...), which name the registry.
const Protocol = directory.DefaultProtocol

// ErrUnknownProtocol is matched (errors.Is) by Refer's and Export's
// refusal of a URL whose scheme names another protocol than Protocol
// ("dubbo://h:p/demo.Echo"). A "protocol" key naming another is an
// *spi.KeyError instead, as every refused key's value.
var ErrUnknownProtocol = errors.New("unknown protocol")

// schemeError is checkProtocol's refusal of a URL's scheme: its text,
// matching ErrUnknownProtocol.
type schemeError struct{ msg string }

func (e *schemeError) Error() string        { return e.msg }
func (e *schemeError) Is(target error) bool { return target == ErrUnknownProtocol }

// checkProtocol refuses a reference URL whose scheme (or "protocol" key)
// names another protocol than Protocol, and one with userinfo. Otherwise
// the first would end as "no provider available" (the directory accepts
// only providers of the reference's protocol), the second be ignored. The
// scheme is matched in lower case: spi.Parse keeps it so (RFC 3986 §3.1),
// so AIRNODE:// is airnode://.
func (n *Node) checkProtocol(u spi.URL) error { return CheckProtocol(n.cat, u) }

// CheckProtocol returns the error Refer and Export refuse u with (they
// prefix it "kernel: refer SERVICE: ") when its scheme names another
// protocol than Protocol (matching ErrUnknownProtocol; a hint when cat
// holds a registry of that name), its "protocol" key another (an
// *spi.KeyError), or it has userinfo; nil otherwise.
func CheckProtocol(cat *extension.Catalogs, u spi.URL) error {
	if s := strings.ToLower(u.Scheme()); s != Protocol {
		hint := ""
		if _, err := cat.Registry.Get(s); err == nil {
			if u.Host() != "" {
				hint = fmt.Sprintf("; %q names a registry: for providers at that address write %s://%s/%s",
					s, Protocol, strings.Join(u.Addresses(), ","), u.Interface())
			} else {
				hint = fmt.Sprintf("; %q names a registry: refer to %s:///%s and give the %s:// URL as the registry URL",
					s, Protocol, u.Interface(), s)
			}
		}
		return &schemeError{msg: fmt.Sprintf("unknown protocol %q (want %s)%s", u.Scheme(), Protocol, hint)}
	}
	if p, ok := u.Param(directory.KeyProtocol); ok && p != Protocol {
		return &spi.KeyError{Keys: []string{directory.KeyProtocol}, Values: []string{p},
			Msg: fmt.Sprintf("unknown protocol %q in URL key %q (want %s)", p, directory.KeyProtocol, Protocol)}
	}
	if u.User() != "" {
		return fmt.Errorf("user %q before '@' in the URL: the %s protocol has no login (for a provider's secret use the token filter: ?token=SECRET)", u.User(), Protocol)
	}
	return nil
}

// checkConsumerKeys fails early for any key of the consumer's URL that
// its provider invokers would reject (CheckConsumerKeys); otherwise every
// provider invoker would fail to build and the reference would only see
// an empty directory ("no provider available", the reason in a log line).
func (n *Node) checkConsumerKeys(u spi.URL) error { return CheckConsumerKeys(n.cat, u) }

// CheckConsumerKeys returns the error Refer refuses consumer URL u with
// for one of its keys (Refer wraps it as "kernel: refer <service>: ..."),
// or nil: two method-level forms of one key with different values
// (Sleep.timeout and methods.Sleep.timeout), and any key a provider
// invoker would reject, checked by the code that builds one
// (readInvokerSettings): connections (1 to 64), connect.timeout,
// reconnect.backoff, payload, timeout and codec (also per method:
// `URL key "methods.Echo.codec": unknown codec "nope" (available: ...)`),
// the transport's keys and the heartbeat's; and the method-level forms of
// the typed kernel keys (checkMethodValues: methods.Echo.retries=abc),
// leaving out the keys only providers read (methods.Echo.executes=-1),
// which a reference ignores with ReferWarnings' warning, naming a
// malformed value, at method level as at service level.
// Every failing check's error is returned, joined (errors.Join, one a
// line; one alone unchanged). list --explain
// calls it on the consumer URL and on the merged URL, so it fails what
// call and bench would.
//
// A URL that names no host gets its providers from a registry, and each
// provider's published keys complete it (spi.MergeURL): its TLS keys
// (tls.ca, tls.cert and tls.key, tls.servername) without "tls" are then
// checked as a TLS consumer's (the files must load), since the provider
// decides TLS by publishing tls=true, as a gRPC client brings its
// credentials and the server decides; CheckProviderTLS checks each
// provider. With hosts (a direct URL, or a merged one) "tls" must be true
// for them, as the transport requires. With TLS on, the files are read
// (tlsconf.Settings.Client): a missing or unreadable tls.ca, tls.cert or
// tls.key is an error naming the key and the file.
func CheckConsumerKeys(cat *extension.Catalogs, u spi.URL) error {
	var refused refusals
	if err := conflictingMethodForms(cat, u); err != nil {
		refused.add(err)
	}
	if u.Host() == "" && hasTLSKeys(u) {
		if _, set := u.Param(tlsconf.KeyTLS); !set {
			u = u.With(tlsconf.KeyTLS, "true")
		}
	}
	if _, err := readInvokerSettings(cat, u); err != nil {
		refused.add(err)
	}
	var providerSide []string // ignored with a warning (ReferWarnings), malformed or not
	for _, p := range providerSideKeys(cat, u) {
		providerSide = append(providerSide, p.key)
	}
	if err := checkMethodValues(u, providerSide); err != nil {
		refused.add(err)
	}
	// The consumer's own TLS files (tls.ca, tls.cert, tls.key) are read
	// now: a missing or unreadable one is this process's problem, to be
	// said when the reference is made, not at every connection attempt.
	if s, err := tlsconf.Parse(u); err == nil && s.Enabled {
		if _, err := s.Client(); err != nil {
			refused.add(err)
		}
	}
	return refused.err()
}

// consumerTLSKeys are the TLS keys a consumer may give without "tls".
var consumerTLSKeys = []string{tlsconf.KeyCA, tlsconf.KeyCert, tlsconf.KeyKey, tlsconf.KeyServerName}

// hasTLSKeys reports whether u sets one of consumerTLSKeys.
func hasTLSKeys(u spi.URL) bool {
	for _, k := range consumerTLSKeys {
		if _, ok := u.Param(k); ok {
			return true
		}
	}
	return false
}

// CheckProviderTLS returns an error when consumer URL consumer gives TLS
// keys (tls.ca, ...) without "tls" and merged, its merge with one
// provider's URL, is not tls=true: the provider serves in clear text, so
// the consumer's trust roots have nothing to check. The error names the
// provider and both ways out. Nil otherwise: a consumer's tls=true or
// tls=false is its own choice (the transport checks the merged URL).
func CheckProviderTLS(consumer, merged spi.URL) error {
	if _, set := consumer.Param(tlsconf.KeyTLS); set || !hasTLSKeys(consumer) {
		return nil
	}
	if on, err := merged.Bool(tlsconf.KeyTLS, false); err == nil && on {
		return nil
	}
	var given, keys []string
	for _, k := range consumerTLSKeys {
		if v, ok := consumer.Param(k); ok {
			given, keys = append(given, k+"="+v), append(keys, k)
		}
	}
	return fmt.Errorf("the consumer gives %s but provider %s publishes no tls=true (it serves in clear text): a consumer's TLS keys complete a provider's tls=true; set tls=true to require TLS, or remove %s",
		strings.Join(given, ", "), merged.Address(), strings.Join(keys, ", "))
}

// refusedInvoker is a provider the reference cannot call: its keys and
// the reference's do not fit (CheckProviderTLS). Never available; a call
// that finds no other provider gets err (the cluster's fallback to every
// invoker, providerView), not a bare "no provider available".
type refusedInvoker struct {
	url   spi.URL
	err   error
	stats spi.Stats
}

func (r *refusedInvoker) URL() spi.URL { return r.url }
func (r *refusedInvoker) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: r.err}
}
func (r *refusedInvoker) Available() bool   { return false }
func (r *refusedInvoker) Stats() *spi.Stats { return &r.stats }
func (r *refusedInvoker) Close() error      { return nil }

// AvailabilityEpoch returns an epoch never bumped: a refused provider is
// never available (directory.Watched).
func (r *refusedInvoker) AvailabilityEpoch() *directory.Epoch { return &neverChanges }

var neverChanges directory.Epoch

// build chooses and builds the cluster and balancer of method ("" for the
// service level).
func (r *Reference) build(method string) (*strategy, error) {
	var refused refusals // a bad cluster and a bad balancer both said
	cb, cs, err := r.node.cat.Cluster.Select(r.url, method)
	if err != nil {
		refused.add(fmt.Errorf("kernel: refer %s: %w", r.key, methodKeyError(cs, r.node.cat.Cluster.Key(), err)))
	}
	lbb, ls, err := r.node.cat.LoadBalance.Select(r.url, method)
	if err != nil {
		refused.add(fmt.Errorf("kernel: refer %s: %w", r.key, methodKeyError(ls, r.node.cat.LoadBalance.Key(), err)))
	}
	if err := refused.err(); err != nil {
		return nil, err
	}
	if r.base != nil && cs.Name == r.base.clusterName && ls.Name == r.base.lbName &&
		!methodLevel(cs.Source, r.node.cat.Cluster.Key()) && !methodLevel(ls.Source, r.node.cat.LoadBalance.Key()) {
		return r.base, nil
	}
	c, err := extension.Build(extension.PointCluster, cs.Name, func() (spi.Cluster, error) { return cb.Build(r.url) })
	if err != nil {
		return nil, fmt.Errorf("kernel: refer %s: %w", r.key, err)
	}
	lb, err := extension.Build(extension.PointLoadBalance, ls.Name, func() (spi.LoadBalance, error) { return lbb.Build(r.url) })
	if err != nil {
		return nil, fmt.Errorf("kernel: refer %s: %w", r.key, err)
	}
	r.node.useLogger(c)
	r.node.useLogger(lb)
	return &strategy{cluster: c, lb: lb, clusterName: cs.Name, lbName: ls.Name}, nil
}

// methodLevel reports whether a selection came from a method-level key.
func methodLevel(source, key string) bool {
	return source != "" && source != extension.SourceDefault && source != key
}

// warnRepeatedProviders warns of each provider address u, a direct URL
// (the reference's airnode://A,B/svc, or a direct:// registry URL),
// lists more than once: the direct registry lists it once (Dubbo's
// dedups silently), and a hand-written list most likely meant another
// address.
func (n *Node) warnRepeatedProviders(key string, u spi.URL) {
	for _, a := range u.RepeatedAddresses() {
		n.logger.Warn("provider address listed more than once in the direct URL: it is one provider, called as one",
			"service", key, "provider", a, "providers", len(u.Addresses()))
	}
}

// methodKeyError returns err, the error of selection s of the point
// selected by key, naming the method-level key that chose it when one
// did (`URL key "methods.Echo.loadbalance": unknown loadbalance "nope"
// (available: ...)`), so that it is not taken for the service level's
// (tester71 #4). A service-level selection's error is err unchanged, and
// so is one that names the key itself (an empty value's:
// "methods.Echo.loadbalance= is empty: ...").
func methodKeyError(s extension.Selection, key string, err error) error {
	if ue, ok := errors.AsType[*extension.UnknownError](err); ok && ue.Key == s.Source {
		return err
	}
	if methodLevel(s.Source, key) && s.Source != extension.SourceScheme {
		return fmt.Errorf("URL key %q: %w", s.Source, err)
	}
	return err
}

// perMethod reports whether u sets one of keys for some method, in a
// method-level form spi.URL.MethodParam reads (spi.URL.MethodsSetting:
// "methods.<m>.<key>", or "<m>.<key>" for m in u's "methods", or for an
// exported Go method name when u has none; "connect.timeout" is no
// method's). Without such a key, every method resolves key as the service
// level does.
func perMethod(u spi.URL, keys ...string) bool {
	return len(u.MethodsSetting(keys...)) > 0
}

// strategyFor returns method's strategy, built on first use.
func (r *Reference) strategyFor(method string) (*strategy, error) {
	if r.uniform {
		return r.base, nil // what build would return (saves a 20 ns sync.Map load)
	}
	if v, ok := r.methods.Load(method); ok {
		if s, ok := v.(*strategy); ok {
			return s, nil
		}
		return nil, v.(error)
	}
	var v any
	s, err := r.build(method)
	if err != nil {
		v = spi.Errorf(spi.StatusClientError, "%v", err)
	} else {
		v = s
	}
	v, _ = r.methods.LoadOrStore(method, v)
	if s, ok := v.(*strategy); ok {
		return s, nil
	}
	return nil, v.(error)
}

// URL returns the reference's consumer URL (with side=consumer).
func (r *Reference) URL() spi.URL { return r.url }

// Providers returns the provider invokers the directory lists now: the
// available ones (a provider that is connecting or reconnecting is left
// out, and so is one ejected for a while because its calls kept failing:
// outlier.consecutive).
func (r *Reference) Providers() []spi.Invoker {
	return r.dir.List(&spi.Invocation{Service: r.key})
}

// Invoke calls method with args and returns the result decoded as a generic
// value (maps, slices, strings, numbers). Each argument is one of args:
// Invoke(ctx, "Place", req) sends one argument, Invoke(ctx, "Place",
// []any{}) one argument that is an empty array (refused BAD_REQUEST for
// a struct parameter), Invoke(ctx, "Place") or Invoke(ctx, "Place",
// []any{}...) none. Timeouts and failures are Call's (see Call: the
// timeout key per attempt, ctx's deadline over the whole call, the
// statuses): failures are *spi.Error values carrying the wire status
// (errors.As); a timeout that ctx's deadline caused also matches
// context.DeadlineExceeded, a cancelled ctx context.Canceled (errors.Is).
//
// A call with a generic argument — a map[string]any or an []any, what
// encoding/json makes of a JSON object or array — is a generic invocation
// and is marked so (spi.AttachmentGeneric=true, as Dubbo's GenericService
// marks its $invoke calls and `airnode call` marks its own): the provider
// refuses a map key naming no field of a struct parameter, BAD_REQUEST
// naming it and listing the fields, where it ignores the key of a typed
// consumer (a newer version of the struct). So a Go gateway relaying JSON
// gets the typo check. Typed Go values (structs, scalars, typed maps and
// slices) leave the call unmarked, as Call does whatever its arguments; a
// caller that put AttachmentGeneric on ctx itself (spi.WithAttachments,
// "false" included) keeps its value.
func (r *Reference) Invoke(ctx context.Context, method string, args ...any) (any, error) {
	if genericArgs(args) {
		ctx = markGeneric(ctx)
	}
	dst := spi.AttachmentsReceiver(ctx) // before the call: see receive
	inv := newInvocation(r.key, method, args, nil)
	res := r.invoke(ctx, inv)
	freeInvocation(inv)
	receive(dst, res)
	return res.Value, res.Err
}

// genericArgs reports whether one of args is a generic value, a
// map[string]any or an []any (Invoke marks such a call generic).
func genericArgs(args []any) bool {
	for _, a := range args {
		switch a.(type) {
		case map[string]any, []any:
			return true
		}
	}
	return false
}

// markGeneric returns ctx with the outgoing attachment
// spi.AttachmentGeneric=true, or ctx itself when its caller set that
// attachment (to any value).
func markGeneric(ctx context.Context) context.Context {
	if _, set := spi.OutgoingAttachments(ctx)[spi.AttachmentGeneric]; set {
		return ctx
	}
	return spi.WithAttachments(ctx, spi.AttachmentGeneric, spi.GenericTrue)
}

// Call calls method with args and decodes the result into reply, a pointer
// (like net/rpc's Call); reply may be nil to discard the value. args is
// the argument list, one element per parameter (nil or empty: none). With
// the msgpack and json codecs a nil element arrives as its parameter's
// zero value ("" for a string, as encoding/json's null does): a method
// that must tell "absent" from "empty" takes a pointer. With protobuf a
// nil element, untyped or a typed nil message ((*pb.T)(nil)), arrives as
// a nil *pb.T (its GetX accessors read it as the empty message), and an
// empty message as a non-nil one. A method's nil message result (it
// returned nil, nil) reaches the caller without an error: a *pb.T reply
// is reset to the empty message, which the caller cannot tell from an
// empty result, and a **pb.T reply is set to nil, which it can (Invoke
// returns nil). A reply that is
// not a pointer, or a nil pointer, fails CLIENT_ERROR naming its type before anything is sent (json.Unmarshal's
// InvalidUnmarshalError): the method does not run. After a failed call
// reply may be partly filled: do not use it.
//
// Timeouts. Each attempt (the cluster may retry: failover's retries)
// waits for its answer at most the "timeout" URL key (default
// DefaultTimeout, 1s; methods.<method>.timeout first; through a registry
// the provider's value when the reference sets none, not so for a direct
// reference), or this call's "timeout" attachment when ctx carries one
// (spi.WithAttachments(ctx, "timeout", "5s"), Dubbo's per-call timeout).
// ctx's deadline, when sooner, bounds the attempt too, and bounds the
// whole call, retries and the wait for a provider included; the provider's
// method gets the sooner of the two as its ctx's deadline.
//
// Failures are *spi.Error values carrying the wire status: errors.As(err,
// &e) and e.Status, spi.StatusOf(err), or errors.Is(err,
// spi.ErrServerTimeout) and the other spi sentinels; a method's
// *spi.BizError matches errors.As. An attempt with no answer in time
// fails CLIENT_TIMEOUT when its request was never fully sent (the method
// did not run), SERVER_TIMEOUT when it was (it may have run). Such a
// timeout that ctx's deadline caused also matches
// context.DeadlineExceeded (errors.Is), keeping its status; one of the
// timeout key, ctx's deadline still ahead, does not. A ctx cancelled
// before or during the call fails CLIENT_ERROR matching context.Canceled
// (and context.Cause's cause, when one was given). The same holds while
// the call waits for a first connection to its providers: ctx's end
// there fails CLIENT_TIMEOUT (a deadline) or CLIENT_ERROR (a cancel)
// "... waiting for a first connection to ADDR ...: nothing was sent",
// matching ctx's error and its cause. A call after Close
// (the reference's or its node's) fails CLIENT_ERROR matching
// ErrReferenceClosed.
//
// Bursts. A provider runs at most 256 calls at once per listening
// address; a call that finds every worker busy waits at most a tenth of
// its timeout and then fails SERVER_THREADPOOL_EXHAUSTED without running
// (failover retries it after a backoff), so a burst of slow calls beyond
// that fails its extra calls fast even when the work would fit the
// timeout (README, "Where calls run: dispatcher").
func (r *Reference) Call(ctx context.Context, method string, args []any, reply any) error {
	if reply != nil && !isSettable(reply) {
		return replyError(r.key, method, reply)
	}
	dst := spi.AttachmentsReceiver(ctx) // before the call: see receive
	inv := newInvocation(r.key, method, args, reply)
	res := r.invoke(ctx, inv)
	freeInvocation(inv)
	receive(dst, res)
	return res.Err
}

// isSettable reports whether reply is a non-nil pointer, which a response
// can be decoded into.
func isSettable(reply any) bool {
	v := reflect.ValueOf(reply)
	return v.Kind() == reflect.Pointer && !v.IsNil()
}

// replyError is Call's CLIENT_ERROR for a reply that is not a non-nil
// pointer.
func replyError(key, method string, reply any) error {
	what := fmt.Sprintf("of type %T, not a pointer", reply)
	if reflect.TypeOf(reply).Kind() == reflect.Pointer {
		what = fmt.Sprintf("a nil %T", reply)
	}
	return spi.Errorf(spi.StatusClientError, "kernel: call %s.%s: reply is %s: pass a pointer to the value to decode into (&v), or nil to discard it; not sent", key, method, what)
}

// receive stores res's attachments (a copy: the caller's to keep) in dst,
// where spi.ReceiveAttachments asked (nil: it did not). Callers look dst
// up before the call: ctx.Value walks the caller's context chain, which
// after a wait among 10,000 callers has left the cache (at c=10,000 the
// lookup took 560 ns after the call against 94 ns at c=100; bench/README,
// the twenty-fifth pass).
func receive(dst *map[string]string, res spi.Result) {
	if dst != nil {
		*dst = maps.Clone(res.Attachments)
	}
}

// invocations recycles the Invocation of each call: the spi contract says
// nothing below the reference retains it after the call returns (forking
// hands each fork a copy), so it is reused, one allocation (80 B) less
// per call (BenchmarkConsumerPath c=1: 554 -> 526 cpu-ns/op, 4 -> 3
// allocs). Its attachments map is never reused: only the struct is.
var invocations = sync.Pool{New: func() any { return new(spi.Invocation) }}

func newInvocation(service, method string, args []any, reply any) *spi.Invocation {
	inv := invocations.Get().(*spi.Invocation) // zero: freeInvocation clears what it puts back
	// Field by field: a composite literal is built on the caller's stack
	// first (120 B more in Reference.Call's frame, which a waiting
	// caller's stack holds).
	inv.Service, inv.Method, inv.Args, inv.Reply = service, method, args, reply
	return inv
}

func freeInvocation(inv *spi.Invocation) {
	*inv = spi.Invocation{} // drop the references: arguments, reply, attachments
	invocations.Put(inv)
}

// invoke runs the chain; a panic in a filter, cluster or balancer becomes
// CLIENT_ERROR.
func (r *Reference) invoke(ctx context.Context, inv *spi.Invocation) (res spi.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = spi.Result{Err: &spi.Error{Status: spi.StatusClientError,
				Message: fmt.Sprintf("panic calling %s.%s: %v", r.key, inv.Method, p),
				Cause:   &panicError{value: p, stack: debug.Stack()}}}
		}
	}()
	if err := r.refuse(ctx, inv); err != nil {
		return spi.Result{Err: err}
	}
	res = r.invoker.Invoke(ctx, inv)
	if res.Err != nil {
		if r.closed.Load() && spi.StatusOf(res.Err) == spi.StatusServiceNotFound {
			// closed while the call looked for a provider: say why none was left
			return spi.Result{Err: r.closedError()}
		}
		res.Err = r.failed(ctx, res.Err, inv.Method, res.ProviderAddr)
	}
	return res
}

// refuse returns why inv may not be sent, or attaches ctx's outgoing
// attachments to it and returns nil: the reference is closed, the method
// name is empty, ctx ended before the call started (CLIENT_TIMEOUT for
// its deadline, else CLIENT_ERROR), or the attachments are refused (see
// attach). Out of invoke, whose frame the caller's stack holds while it
// waits for the answer (bench/README.md, the thirty-third pass).
func (r *Reference) refuse(ctx context.Context, inv *spi.Invocation) error {
	if r.closed.Load() {
		return r.closedError()
	}
	if inv.Method == "" {
		return spi.Errorf(spi.StatusClientError, "kernel: call %s: empty method name", r.key)
	}
	if err := ctx.Err(); err != nil {
		// Done before the call started: say so, matching ctx's error,
		// rather than whatever the first connection's state would say.
		st := spi.StatusClientError
		if errors.Is(err, context.DeadlineExceeded) {
			st = spi.StatusClientTimeout
		}
		return ctxCause(ctx, spi.Errorf(st, "kernel: call %s.%s: %w before the call started", r.key, inv.Method, err))
	}
	if out := spi.OutgoingAttachments(ctx); len(out) > 0 {
		return r.attach(inv, out)
	}
	return nil
}

// failed returns err, a failed call of method's error from the provider
// at addr ("" when none was called), with what the caller needs to read
// it: the registry's near miss when no provider of the service is
// listed, ctx's cause and deadline, the provider's address. An error
// carrying no *spi.Error (a consumer filter's, a cluster's or balancer's
// plain error) becomes CLIENT_ERROR, the status spi.StatusOf gives it,
// with its text and as its Cause: its text then starts with the status
// as every other failure's does (a consumer filter's is typed already,
// naming it: "CLIENT_ERROR: kernel: call shop.Cart.Add: consumer filter
// "quota": quota exceeded"). An error wrapping an *spi.Error (a
// consumer filter's fmt.Errorf("auth: %w", err)) becomes an *spi.Error
// of the wrapped status with the wrapper's text, "SERVICE_ERROR: auth:
// boom" (spi.FromError, gRPC's rule), the wrapper its Cause.
func (r *Reference) failed(ctx context.Context, err error, method, addr string) error {
	if _, ok := err.(*spi.Error); !ok {
		err = typed(err)
	}
	if spi.StatusOf(err) == spi.StatusServiceNotFound && r.regName != "direct" && len(r.dir.All()) == 0 && len(r.dir.Ignored()) == 0 {
		err = r.withNearMiss(ctx, err, method)
	}
	return withProvider(ctxCause(ctx, deadlineCause(ctx, err)), addr)
}

// withNearMiss returns err, the "no provider available" of a reference
// the registry lists no provider of, with what the registry lists instead
// of it for a call of method (directory.Directory.NearMiss: "; the
// registry lists no provider of shop.Shopp; did you mean \"shop.Shop\"?"),
// a copy; err itself when
// there is nothing to add or err is not an *spi.Error. The look-up is on
// this error path only, bounded by directory.NearMissTimeout.
func (r *Reference) withNearMiss(ctx context.Context, err error, method string) error {
	e, ok := err.(*spi.Error)
	if !ok {
		return err
	}
	hint := r.dir.NearMiss(ctx, method)
	if hint == "" {
		return err
	}
	c := *e
	c.Message += hint
	return &c
}

// withProvider returns err naming addr as its provider (spi.Error.Provider),
// a copy: an *spi.Error may be shared (a method's cached CLIENT_ERROR). err
// itself when addr is "", err is not an *spi.Error, or names one already.
func withProvider(err error, addr string) error {
	e, ok := err.(*spi.Error)
	if !ok || addr == "" || e.Provider != "" {
		return err
	}
	c := *e
	c.Provider = addr
	return &c
}

// closedError is the CLIENT_ERROR of a call made after the reference was
// closed, by its Close or its node's Shutdown: "kernel: reference
// demo.Echo is closed (its node is shut down)", not the directory's bare
// "no provider available".
func (r *Reference) closedError() error {
	why := "reference closed"
	r.node.mu.Lock()
	if r.node.closed {
		why = "its node is shut down"
	}
	r.node.mu.Unlock()
	return &spi.Error{Status: spi.StatusClientError, Message: fmt.Sprintf("kernel: reference %s is closed (%s)", r.key, why), Cause: ErrReferenceClosed}
}

// ErrReferenceClosed is the cause of every call made with a Reference
// after its Close or its node's Shutdown (CLIENT_ERROR; errors.Is).
var ErrReferenceClosed = errors.New("kernel: reference is closed")

// attach copies the outgoing attachments out (spi.WithAttachments) into a
// new map of inv's, before the consumer filters run. An empty key is
// refused, CLIENT_ERROR. "timeout" (in any case; stored as "timeout") is
// this call's timeout per attempt, in place of the method's "timeout" URL
// key (Dubbo's per-call RpcContext timeout): a Go duration or bare
// milliseconds, at least 1ms, checked here with the URL key's wording
// (CLIENT_ERROR); the context's deadline still bounds the call. Another
// key the kernel reserves (spi.ReservedAttachment, in any case: remote,
// token) is refused, CLIENT_ERROR naming it: the kernel sets those
// itself, and a caller's "token" must not stand in for the provider's.
func (r *Reference) attach(inv *spi.Invocation, out map[string]string) error {
	m := make(map[string]string, len(out)+1)
	for k, v := range out {
		switch {
		case k == "":
			return spi.Errorf(spi.StatusClientError, "kernel: call %s.%s: an attachment key is empty: every attachment needs a key (spi.WithAttachments(ctx, \"tenant\", \"x\"))",
				r.key, inv.Method)
		case strings.EqualFold(k, spi.AttachmentTimeout):
			if _, want := parseTimeout(v); want != "" {
				return timeoutAttachmentError(r.key+"."+inv.Method, v, want)
			}
			if _, twice := m[spi.AttachmentTimeout]; twice {
				return spi.Errorf(spi.StatusClientError, "kernel: call %s.%s: attachment %q is given twice (in two cases): give it once",
					r.key, inv.Method, spi.AttachmentTimeout)
			}
			k = spi.AttachmentTimeout
		case spi.ReservedAttachment(k):
			return spi.Errorf(spi.StatusClientError, "kernel: call %s.%s: attachment %q is reserved by the kernel (reserved: %s, %s; %q sets this call's timeout); a token comes from the token URL key",
				r.key, inv.Method, k, spi.AttachmentRemote, spi.AttachmentToken, spi.AttachmentTimeout)
		}
		m[k] = v
	}
	inv.Attachments = m
	return nil
}

// deadlineCause makes errors.Is(err, context.DeadlineExceeded) true for a
// CLIENT_TIMEOUT or SERVER_TIMEOUT that ctx's deadline caused (it has
// passed when the call returns), as a cancelled ctx already gives
// context.Canceled; the status stays. A timeout of the reference's own
// "timeout" key with ctx's deadline still ahead is left as is: the
// caller's context did not expire. (gRPC maps both to DeadlineExceeded; a
// Go caller checking errors.Is asks whether its own deadline ended the
// call.)
func deadlineCause(ctx context.Context, err error) error {
	e, ok := err.(*spi.Error)
	if !ok || e.Status != spi.StatusClientTimeout && e.Status != spi.StatusServerTimeout {
		return err
	}
	d, ok := ctx.Deadline()
	if !ok || time.Now().Before(d) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	cause := error(context.DeadlineExceeded)
	if e.Cause != nil {
		cause = errors.Join(e.Cause, context.DeadlineExceeded)
	}
	return &spi.Error{Status: e.Status, Message: e.Message, Cause: cause}
}

// ctxCause adds to err, a failure that done ctx caused (errors.Is(err,
// ctx.Err())), the cause ctx was ended with (context.WithCancelCause,
// WithTimeoutCause) when that is not ctx.Err() itself: errors.Is(err,
// cause) then holds and the message ends "(cause: ...)". err as is
// otherwise (tester69 finding 4: the caller's cause was dropped).
//
// A failure that ctx's deadline caused (deadlineCause: the deadline has
// passed) can return before ctx's own timer has ended ctx (its timer
// runs apart: under load ctx.Err() stayed nil for milliseconds after
// the deadline, and a WithTimeoutCause cause was dropped from 1 call in
// 5, tester85 #9): ctxCause then waits for ctx to end, at most
// causeWait, as the deadline is already past.
func ctxCause(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if d, ok := ctx.Deadline(); cerr == nil && ok && !time.Now().Before(d) && errors.Is(err, context.DeadlineExceeded) {
		t := time.NewTimer(causeWait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		cerr = ctx.Err()
	}
	if cerr == nil {
		return err
	}
	cause := context.Cause(ctx)
	e, ok := err.(*spi.Error)
	if !ok || cause == nil || cause == cerr || !errors.Is(err, cerr) || errors.Is(err, cause) {
		return err
	}
	c := *e
	c.Message += " (cause: " + cause.Error() + ")"
	c.Cause = errors.Join(e.Cause, cause)
	return &c
}

// causeWait bounds ctxCause's wait for a context whose deadline has
// passed to end: its timer is due, so it ends within microseconds, or a
// few milliseconds on a loaded machine.
const causeWait = 100 * time.Millisecond

// Close stops the reference's directory (closing its provider invokers and,
// with the last user, their connections). Idempotent. Calls made after it
// (or after the node's Shutdown, which closes every reference) fail
// CLIENT_ERROR "kernel: reference <service key> is closed", matching
// ErrReferenceClosed.
func (r *Reference) Close() error { return r.closeWithin(context.Background()) }

// closeOwned releases what the reference owns (closeOwnedWithin, with no
// bound but the consumer entry's 5 s).
func (r *Reference) closeOwned() error {
	return r.closeOwnedWithin(context.Background(), "close reference "+r.key)
}

// clusterInvoker is the end of the consumer filter chain: it hands the call
// to the method's cluster over the directory.
type clusterInvoker struct{ ref *Reference }

func (c *clusterInvoker) URL() spi.URL { return c.ref.url }

func (c *clusterInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	s, err := c.ref.strategyFor(inv.Method)
	if err != nil {
		return spi.Result{Err: err}
	}
	listed, unlisted := c.ref.unlisted(inv.Method)
	if !c.ref.settled.Load() && affinity(s.lb) {
		c.ref.awaitSettled(ctx)
	}
	if err := c.ref.awaitProvider(ctx, inv); err != nil {
		return spi.Result{Err: err}
	}
	if unlisted {
		return c.ref.invokeUnlisted(ctx, inv, s, listed)
	}
	res := s.cluster.Invoke(ctx, inv, providerView{c.ref.dir}, s.lb)
	if res.Err != nil {
		res.Err = typed(res.Err) // so that the filters above tell it from one of their own
	}
	return res
}

// unlisted reports whether no provider of the registry's list publishes
// method (directory.Unlisted: each provider URL has "methods", none
// names it), with the methods they list. Never for a direct reference,
// whose provider URLs are the reference's own URL.
func (r *Reference) unlisted(method string) ([]string, bool) {
	if r.regName == "direct" {
		return nil, false
	}
	return r.dir.Unlisted(method)
}

// invokeUnlisted runs a call of a method that no provider lists on one
// provider the balancer picks, once, instead of the cluster (failover
// retries SERVICE_NOT_FOUND on every other provider, each answering the
// same): the provider says why it lacks the method (a method its codec
// cannot encode is left out of "methods" with the reason), and a provider
// serving a method it did not list still answers. Its SERVICE_NOT_FOUND
// comes back naming the method, the methods listed and that it was not
// retried (Dubbo's "No provider available ... method").
func (r *Reference) invokeUnlisted(ctx context.Context, inv *spi.Invocation, s *strategy, listed []string) spi.Result {
	view := providerView{r.dir}
	list := view.List(inv)
	var x spi.Invoker
	var err error
	if cl, ok := s.lb.(spi.ContextLoadBalance); ok {
		x, err = cl.SelectContext(ctx, list, inv)
	} else if len(list) > 0 {
		x = s.lb.Select(list, inv)
	}
	if err != nil {
		return spi.Result{Err: err}
	}
	if x == nil { // none to pick: the cluster says why, as for any call
		return s.cluster.Invoke(ctx, inv, view, s.lb)
	}
	res := x.Invoke(ctx, inv)
	if spi.StatusOf(res.Err) != spi.StatusServiceNotFound {
		return res
	}
	hint := ""
	if c := suggest.Closest(inv.Method, listed); c != "" {
		hint = fmt.Sprintf("; did you mean %q?", c)
	}
	n := len(r.dir.Providers())
	return spi.Result{Err: &spi.Error{Status: spi.StatusServiceNotFound, Cause: res.Err,
		Message: fmt.Sprintf("kernel: no provider of %s lists method %q (methods of its %d %s in %s: %s)%s; asked %s once, not retried: %v",
			r.key, inv.Method, n, plural(n, "provider"), r.dir.Registry(), strings.Join(listed, ", "), hint, x.URL().Address(), res.Err)}}
}

// providerView is the directory as the cluster sees it: the available
// invokers, or, when none is, every invoker but those that said go-away
// (goingAway), so that the cluster picks one whose fast CHANNEL_INACTIVE
// says why it cannot be reached (connection refused, TLS, ...) instead of
// a bare "no provider available", or a read-only one still draining,
// which runs the call; failover retries that status on the others. A
// provider that said go-away would fail the call at once without running
// it: it is never picked, and a retry never goes back to it.
type providerView struct{ *directory.Directory }

func (v providerView) List(inv *spi.Invocation) []spi.Invoker {
	if l := v.Directory.List(inv); len(l) > 0 {
		return l
	}
	return staying(v.Directory.All())
}

// goingAwayer is a provider invoker that can say whether its provider
// said go-away (remoteInvoker, and filterInvoker around it).
type goingAwayer interface{ GoingAway() bool }

// goingAway reports whether inv said go-away (remoteInvoker.GoingAway).
func goingAway(inv spi.Invoker) bool {
	g, ok := inv.(goingAwayer)
	return ok && g.GoingAway()
}

// staying returns the invokers of all that did not say go-away: all
// itself when none did (no allocation), else a new slice.
func staying(all []spi.Invoker) []spi.Invoker {
	for i, inv := range all {
		if goingAway(inv) {
			out := make([]spi.Invoker, 0, len(all)-1)
			out = append(out, all[:i]...)
			for _, inv := range all[i+1:] {
				if !goingAway(inv) {
					out = append(out, inv)
				}
			}
			return out
		}
	}
	return all
}

// allGoingAway returns the error of a call none of whose providers can take
// it because every one of all said go-away (nil when one did not, or there
// is none): CHANNEL_INACTIVE with spi.ErrGoAway, nothing sent, naming
// them. The call fails once with it instead of having its retries fail at
// once on them, each of which would not run it.
func (r *Reference) allGoingAway(inv *spi.Invocation, all []spi.Invoker) error {
	if len(all) == 0 {
		return nil
	}
	addrs := make([]string, 0, len(all))
	for _, x := range all {
		if !goingAway(x) {
			return nil
		}
		addrs = append(addrs, x.URL().Address())
	}
	who := fmt.Sprintf("the only provider of %s (%s) said go-away (it is draining to shut down and runs no new call)", r.key, addrs[0])
	if len(all) > 1 {
		who = fmt.Sprintf("all %d providers of %s (%s) said go-away (they are draining to shut down and run no new call)", len(all), r.key, strings.Join(addrs, ", "))
	}
	return &spi.Error{Status: spi.StatusChannelInactive, Cause: spi.ErrGoAway,
		Message: fmt.Sprintf("kernel: call %s.%s not sent: %s; calls go to a provider again once it reconnects or a new one is listed", inv.Service, inv.Method, who)}
}

// awaitProvider lets a call wait for a first provider: when no provider
// invoker is available but some is still making its first connection (a
// fresh reference: the directory's invokers start connecting as they are
// created), it waits until one is available or none is connecting any
// more, for at most the shorter of the call's timeout and twice
// connect.timeout plus firstAttemptGrace (the attempts end within
// connect.timeout: the rest is slack for a loaded machine).
// This plays the part of Dubbo's connect-at-refer check without making a
// call wait on one hung provider while another is up. With no provider
// available it first asks the connections that are down to redial at once
// (conn.redialNow, at most one dial per connection per 500 ms) and waits
// for those attempts the same way. The wait comes
// before the call's attempts, each of which then has its whole timeout
// (a deadline over both would leave failover no time to retry). When the
// call's timeout ran out first with still no provider connected, it
// returns CLIENT_TIMEOUT (nothing was sent); when connect.timeout did, the
// call goes on and its attempts say why the providers cannot be reached.
// When ctx ends first it returns ctx's error, CLIENT_TIMEOUT for a
// deadline, CLIENT_ERROR for a cancel, nothing sent (invoke adds the
// cause); when the reference closes, closedError.
// When every provider said go-away it returns at once the error that says
// so (allGoingAway): their channels close after their drains, and the
// redials then find them gone or back.
func (r *Reference) awaitProvider(ctx context.Context, inv *spi.Invocation) error {
	all := r.dir.All()
	if anyAvailable(all) {
		return nil
	}
	if err := r.allGoingAway(inv, all); err != nil {
		return err
	}
	for _, x := range all {
		if c, ok := x.(connector); ok {
			c.redialNow() // a provider restarted during a long backoff is back for this call
		}
	}
	if !r.connecting() {
		return nil
	}
	start := time.Now()
	u := r.url
	if all := r.dir.All(); len(all) > 0 {
		u = all[0].URL() // merged: the provider's timeout unless the consumer set one
	}
	timeout, err := u.MethodDuration(inv.Method, "timeout", DefaultTimeout)
	if err != nil {
		timeout = DefaultTimeout
	}
	if t, err := attemptTimeout(inv, timeout); err == nil {
		timeout = t // the caller's "timeout" attachment
	}
	connect, err := u.Duration("connect.timeout", DefaultConnectTimeout)
	if err != nil {
		connect = DefaultConnectTimeout
	}
	// connect.timeout bounds each first attempt (dial and ping), which
	// began before this call: the loop ends as soon as they have (and the
	// call's attempts can say how); the timer is the backstop for a
	// machine too loaded to run them on time.
	t := time.NewTimer(min(timeout, 2*connect+firstAttemptGrace))
	defer t.Stop()
	for {
		changed := r.node.pool.changed.wait()
		if len(r.dir.List(inv)) > 0 || !r.connecting() {
			return nil
		}
		select {
		case <-changed:
		case <-t.C:
			if timeout <= 2*connect+firstAttemptGrace && len(r.dir.List(inv)) == 0 && r.connecting() {
				return spi.Errorf(spi.StatusClientTimeout, "kernel: call %s.%s timed out after %v waiting for a first connection to %s (timeout %v; connect.timeout %v): nothing was sent",
					inv.Service, inv.Method, time.Since(start).Round(time.Millisecond/10), r.addresses(), timeout, connect)
			}
			return nil
		case <-ctx.Done():
			// Say so, matching ctx's error (invoke adds its cause), as
			// a call whose ctx ended before it started does: the
			// providers' "not connected yet" matched neither.
			err := ctx.Err()
			st := spi.StatusClientError
			if errors.Is(err, context.DeadlineExceeded) {
				st = spi.StatusClientTimeout
			}
			return spi.Errorf(st, "kernel: call %s.%s: %w after %v waiting for a first connection to %s (timeout %v; connect.timeout %v): nothing was sent",
				inv.Service, inv.Method, err, time.Since(start).Round(time.Millisecond/10), r.addresses(), timeout, connect)
		case <-r.done:
			return r.closedError()
		}
	}
}

// addresses returns the addresses of the reference's provider invokers,
// comma-separated, for errors.
func (r *Reference) addresses() string {
	var addrs []string
	for _, x := range r.dir.All() {
		addrs = append(addrs, x.URL().Address())
	}
	return strings.Join(addrs, ", ")
}

// affinity reports whether lb wants every provider's first connection
// attempt to have ended before it picks (spi.AffinityLoadBalance).
func affinity(lb spi.LoadBalance) bool {
	a, ok := lb.(spi.AffinityLoadBalance)
	return ok && a.Affinity()
}

// awaitSettled holds a call of an affinity balancer (consistenthash) until
// no provider invoker of the reference is making its first connection
// attempt, so that the balancer's first pick is over the same providers as
// a consumer process that has been up for a while: every provider that
// answered, none known down (Dubbo connects every provider at refer). It
// waits at most twice connect.timeout plus firstAttemptGrace (each attempt
// ends within connect.timeout; the rest is slack for a loaded machine), or
// until ctx ends, and then marks the reference settled: later calls, and
// providers joining later, never wait here. Then awaitProvider and the
// cluster go on as for any balancer. With every provider up on loopback the
// wait is the slowest first dial and ping (about a millisecond); a provider
// that accepts but never answers costs the first calls connect.timeout.
func (r *Reference) awaitSettled(ctx context.Context) {
	if !r.connecting() {
		r.settled.Store(true)
		return
	}
	connect := DefaultConnectTimeout
	if all := r.dir.All(); len(all) > 0 {
		if d, err := all[0].URL().Duration("connect.timeout", DefaultConnectTimeout); err == nil {
			connect = d
		}
	}
	t := time.NewTimer(2*connect + firstAttemptGrace)
	defer t.Stop()
	for {
		changed := r.node.pool.changed.wait()
		if !r.connecting() {
			r.settled.Store(true)
			return
		}
		select {
		case <-changed:
		case <-t.C:
			r.settled.Store(true)
			return
		case <-ctx.Done():
			return // the cluster reports the ctx's error; the next call waits again
		case <-r.done:
			return // closed: its calls fail ErrReferenceClosed
		case <-r.node.closing:
			return // shutting down: its calls go on without waiting
		}
	}
}

// WaitReady blocks until a provider of the reference is connected and
// usable, or none is still making its first connection attempt (each
// attempt, a dial and a ping, ends within connect.timeout: 3s by
// default), or ctx ends, and reports whether a provider is usable. It is
// Dubbo's connect-at-refer for a caller that wants it: a call's timeout
// bounds its own wait for a first connection (a 100 ms call on a link
// where connecting takes longer fails CLIENT_TIMEOUT, nothing sent), so a
// one-shot client (`airnode call`) or a service at start-up waits here
// first, with a deadline of its own such as twice connect.timeout and a
// second. False is not an error: the next call says why no provider can
// be reached. Refer returned after the registry's first provider list
// (directory.Start), so a provider listed then is judged here.
// It returns false at once when the reference is closed, or once its Close
// begins (a closed reference never becomes ready), and, when its node's
// Shutdown begins, whether a provider is usable then (the node's
// references still call during the drain), as when ctx ends.
func (r *Reference) WaitReady(ctx context.Context) bool {
	for {
		changed := r.node.pool.changed.wait()
		if r.closed.Load() {
			return false
		}
		// One list, and whether an attempt is pending read before whether
		// a provider is up: a connection publishes its channel before it
		// counts as no longer connecting, so an attempt that succeeds
		// between the two reads is seen by the second. Read the other way
		// round, a first connection made between them was neither
		// (false in under a millisecond, 1 run in a few hundred: tester47).
		all := r.dir.All()
		pending := anyConnecting(all)
		if anyAvailable(all) {
			return true
		}
		if !pending {
			return false
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return anyAvailable(r.dir.All())
		case <-r.done:
			return false
		case <-r.node.closing:
			return anyAvailable(r.dir.All())
		}
	}
}

// WaitAvailable blocks until a provider of the reference is connected and
// usable, or ctx ends, and reports whether one is. Unlike WaitReady, which
// judges the providers listed now, it also waits for a registry to list a
// first provider and for a listed one that failed to connect to come back:
// gRPC's WaitForReady, for a consumer that may start before its
// providers (compose, Kubernetes). Give ctx a deadline: without one it
// waits as long as no provider is usable. Calls do not wait so: with no
// provider listed a call fails SERVICE_NOT_FOUND at once (Dubbo's
// check=false consumer), and `airnode call` and `bench` give a registry
// that lists none 2 s, as this would with a 2 s deadline. Like gRPC's
// wait on a ClientConn that is closed, it returns false promptly (within
// milliseconds) when the reference's Close or its node's Shutdown (or
// Close) begins, whatever ctx: a closed reference never becomes
// available, and a node shutting down lists no new provider for its
// references (during its drain it returns whether one is usable then).
func (r *Reference) WaitAvailable(ctx context.Context) bool {
	for {
		listed := r.listed.wait()
		pool := r.node.pool.changed.wait()
		if r.WaitReady(ctx) {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		// none usable and none connecting: wait for the list to change,
		// or for a connection's state to (a reconnect)
		select {
		case <-listed:
		case <-pool:
		case <-ctx.Done():
			return anyAvailable(r.dir.All())
		case <-r.done:
			return false
		case <-r.node.closing:
			return !r.closed.Load() && anyAvailable(r.dir.All())
		}
	}
}

// firstAttemptGrace is how much longer than connect.timeout a call waits
// for the first connection attempts of a fresh reference to end
// (awaitProvider), so that it reports their outcome rather than "attempt
// in progress".
const firstAttemptGrace = 200 * time.Millisecond

// anyAvailable reports whether one of invs is available, as len(List) > 0
// does, stopping at the first available one.
func anyAvailable(invs []spi.Invoker) bool {
	for _, inv := range invs {
		if inv.Available() {
			return true
		}
	}
	return false
}

// connecting reports whether some provider invoker of the reference is
// still making its first connection.
func (r *Reference) connecting() bool { return anyConnecting(r.dir.All()) }

// anyConnecting reports whether one of invs is still making its first
// connection (or a redial a call asked for).
func anyConnecting(invs []spi.Invoker) bool {
	for _, inv := range invs {
		if isConnecting(inv) {
			return true
		}
	}
	return false
}

func (c *clusterInvoker) Available() bool { return len(c.ref.Providers()) > 0 }

func (c *clusterInvoker) Stats() *spi.Stats { return nil }

func (c *clusterInvoker) Close() error { return c.ref.Close() }

var _ spi.Invoker = (*clusterInvoker)(nil)

// exportedName reports whether s can name an exported Go method: an upper
// case first letter and no dot.
func exportedName(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) && !strings.Contains(s, ".")
}

package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/tlsconf"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Provider URL defaults.
const (
	// maxWeight is the largest weight the bundled balancers use (the
	// warmup package's MaxWeight: sums over any provider list fit in an
	// int64); a larger one is published as it, with a warning.
	maxWeight = math.MaxInt32
	// DefaultWeight is a provider's weight when "weight" is absent.
	DefaultWeight = 100
	// DefaultWarmup is a provider's warm-up period when "warmup" is absent.
	DefaultWarmup = 10 * time.Minute
)

// defaultWarmupText is DefaultWarmup as written in provider URLs.
const defaultWarmupText = "10m"

// Exporter is one exported service: its provider URL (as registered) and
// the server it is reachable through.
type Exporter struct {
	node    *Node
	url     spi.URL
	key     string // service key
	srv     *server
	reg     spi.Registry // nil when no registry is configured
	regName string       // reg's name (its URL scheme), for errors
	once    sync.Once
	gone    atomic.Bool // Unexport began: the service is no longer served
	// notServing is SetServing's reason while the service is marked not
	// serving (the health service answers NOT_SERVING), nil otherwise
	notServing atomic.Pointer[string]
}

// URL returns the provider URL as registered: the bound address (or the
// advertise key's), and the keys timestamp, methods, weight, warmup and
// side=provider, its values in Dubbo's form (durations as integer
// milliseconds, sizes as integer bytes: warmup=600000, payload=8388608;
// registryEntry), which airnode reads as it reads the Go forms.
func (e *Exporter) URL() spi.URL { return e.url }

// unregister withdraws the provider URL from the registry, once; op
// ("shutdown", "unexport t.Echo") prefixes the error of an Unregister
// left running at ctx's end.
func (e *Exporter) unregister(ctx context.Context, op string) error {
	var err error
	e.once.Do(func() {
		if e.reg != nil {
			// bounded by ctx even when the registry ignores it (within)
			step := fmt.Sprintf("registry %q Unregister of %s", e.regName, e.key)
			uerr := e.node.within(ctx, op, step, func() error { return e.reg.Unregister(ctx, e.url) })
			var left *LeftRunningError
			if uerr != nil && !errors.As(uerr, &left) {
				uerr = fmt.Errorf("kernel: unregister %s: %w", e.key, uerr)
			}
			err = uerr
		}
	})
	return err
}

// Unexport unregisters the service and stops serving it (later requests get
// SERVICE_NOT_FOUND, which a failover consumer retries on another
// provider); the server keeps serving other services until Shutdown.
// It does not wait: there is no shutdown.wait for consumers to see the
// entry go and no drain, and calls of the service already running go on
// to their end and are answered. Node.Shutdown is the graceful stop
// (wait, go-away, drain). Idempotent.
func (e *Exporter) Unexport(ctx context.Context) error {
	ctx = withLateWindow(ctx)
	e.gone.Store(true)
	err := e.unregister(ctx, "unexport "+e.key)
	e.srv.remove(e.key)
	e.node.mu.Lock()
	if i := slices.Index(e.node.exporters, e); i >= 0 {
		e.node.exporters = slices.Delete(e.node.exporters, i, i+1)
	}
	e.node.mu.Unlock()
	return err
}

// Export serves impl's exported methods under the service key of u
// (airnode://host:port/interface?...), as net/rpc does but with a context
// and several arguments: methods of shape
// func(ctx context.Context, args...) (R, error) or ... error, with or
// without the context. The method table is reflected once here. A
// method's returned error is answered SERVICE_ERROR with its text, or with
// the status of the *spi.Error it carries unless that status would tell
// the consumer the call did not run (SERVICE_NOT_FOUND from the method's
// own downstream call...): that becomes SERVICE_ERROR "t.Orders.Place
// returned SERVICE_NOT_FOUND: ...", so failover never runs the method
// again because of it (package doc).
//
// u's interface must be one a service key gives back (spi.CheckInterface:
// no '/', ':', ',', '*', URL syntax or space; Export refuses another,
// naming the character), and HealthService only for a service with a
// method Check (it replaces the health service on the address).
//
// u's address is where the service listens: port 0, or no port, picks a
// free port; host 0.0.0.0, or none before the port
// (airnode://:20880/...), listens on every interface; a URL with neither
// host nor port (airnode:///demo.Echo) is refused, naming these forms.
// The address published is the one bound: the IP a host name resolved to
// (localhost publishes 127.0.0.1), this host's first non-loopback address
// for every interface; the URL key advertise (HOST, HOST:PORT,
// [IPv6]:PORT, :PORT or a network interface name; not published)
// publishes another, as Dubbo's DUBBO_IP_TO_REGISTRY does (behind NAT, a
// port-forward, in a container); a bad value fails Export before it
// listens. A loopback address published to a registry other hosts read
// is logged at Warn, once per node, registry and address
// (warnLoopbackPublished). A transport's listener must give its address as host:port
// (spi.Listener.Addr): one with no port (a unix socket's path) fails
// Export, naming the transport, rather than publish port 0.
//
// A ctx already done fails Export before it listens or registers
// anything (as Refer), wrapping ctx's error. ctx bounds the extension
// calls Export waits on, whether they honour it or not: the registry's Build (on the node's first use of that registry
// URL), a transport's Listen (which takes no ctx) and the registry's
// Register still running at ctx's end (or, with no sooner deadline in ctx,
// 1 s after its own bound, DefaultRegisterTimeout: WithRegisterTimeout)
// are left running, and Export fails
// with a *LeftRunningError naming the transport or registry
// (`registry "zookeeper" Build`; a listener Listen returns later is
// closed; a Register that succeeds later is undone: the entry is
// unregistered, bounded by 10 s, and a Warn says so). A registry's Build runs without the node's lock, on a
// goroutine of its own: while it blocks, Shutdown and the node's other
// Exports and Refers go on; those that need the same registry URL wait
// for that one Build, each until its own ctx's end. A Build that returns
// after its callers stopped waiting makes the node's registry for its
// URL (used by the next Export or Refer), or is closed when the node has
// shut down. The transport's and the provider filters' Builds are not
// bounded by ctx (spi's "What the kernel does not bound"; a plugin
// filter's Build is bounded by its plugin). When the end of ctx ended
// the wait, the error matches ctx's error (errors.Is(err,
// context.DeadlineExceeded), or context.Canceled) and says "did not
// return before the caller's context deadline passed, after 300ms",
// with the registry's cause when it gives one
// (spi.RegistryUnreachable); when the Register's own bound did, it
// matches neither and gives the bound ("did not return within 10s").
//
// A failed Export leaves no listener behind that it opened for nothing:
// when it fails after listening (its Register failed or was left
// running) and nothing else is, or was, exported on that listener, the
// listener is closed before Export returns (the address refuses
// connections, and a later Export on it listens again), and the error
// ends "; the listener it opened on 127.0.0.1:20880 is closed: nothing
// is exported on it". A listener shared with services exported before
// stays.
//
// The provider URL gets timestamp (ms since epoch), methods (sorted),
// weight (default 100; negative or non-numeric is an error), warmup
// (default 10m) and side=provider. Services exported on the same transport
// and address share one server; port 0 picks a free port, shared by later
// exports to port 0 on the same host (so the same service exported twice
// to port 0 on one node fails, saying so: use a node for each provider,
// or explicit ports). When the node has a registry (or u has
// a "registry" parameter holding a registry URL) the provider URL is
// registered in it. The keys consumers read from the provider URL
// (timeout, codec, connections, transport and heartbeat keys...) are
// checked as a consumer's invoker checks them: a value no consumer could
// use is an error naming the key, at service and method level
// (methods.Echo.retries=abc). A method-level key that cannot be set per
// method (methods.Echo.transport: MethodKeyNoEffect) is logged as having
// no effect. The provider filter chain, plugin
// filters included, is built before the service listens or registers: a
// filter that cannot be built (a bad value of its key, a plugin whose
// Build does not answer within its bound) fails Export naming the service
// and the filter ("kernel: export demo.Echo: filter "acme.authz": ..."),
// having listened on nothing new and registered nothing.
//
// Exported methods of another shape (a last result that is not an error,
// more than two results, variadic), and those no call could reach or
// answer (a context.Context after the first parameter, a chan, func or
// unsafe.Pointer parameter or result, a parameter or result type that
// the URL's codec cannot encode even empty: a plain struct under
// codec=protobuf), are not
// served: Export logs a warning for each, naming it and why (at debug level for a
// String() string and a method returning the exported type, a setup
// method called before Export), and a call of one is
// SERVICE_NOT_FOUND saying so ("service "edge.Weird" has no method "NoCtx"
// of a servable shape (NoCtx(int) int: want ...)"). A value with no method
// of the shape is refused, naming the skipped ones. Methods with pointer
// receivers are not in a value's method set: exporting Svc{} whose
// PtrRecv has a pointer receiver logs a warning ("method PtrRecv has a
// pointer receiver: export &edge.Svc{} (a *edge.Svc) to serve it"; for
// several, "methods PtrErr, PtrRecv have pointer receivers: ... them"),
// and a call of one is SERVICE_NOT_FOUND saying why; a value whose every
// servable method has a pointer receiver is refused with that hint, and a
// typed nil pointer ((*Svc)(nil)) is refused.
func (n *Node) Export(ctx context.Context, impl any, u spi.URL) (*Exporter, error) {
	ctx = withLateWindow(ctx)
	mt, err := newMethodTable(impl)
	if err != nil {
		return nil, err
	}
	if err := mt.skipUncodable(n.cat.Codec, u); err != nil {
		return nil, err
	}
	e, err := n.export(ctx, u, mt.names, func(pu spi.URL, filters []chainFilter) service {
		inv := &localInvoker{url: pu, table: mt}
		return newService(pu, mt, inv, filters)
	})
	if err != nil {
		return nil, err
	}
	for _, name := range mt.skippedNames() {
		if mt.quietly[name] {
			n.logger.Debug(fmt.Sprintf("export %s: not serving method %s", u.ServiceKey(), mt.skipped[name]),
				"service", u.ServiceKey(), "type", mt.typ, "method", name)
			continue
		}
		n.logger.Warn(fmt.Sprintf("export %s: not serving method %s", u.ServiceKey(), mt.skipped[name]),
			"service", u.ServiceKey(), "type", mt.typ, "method", name)
	}
	if hint := mt.pointerHint(); hint != "" {
		n.logger.Warn(fmt.Sprintf("export %s: %s", u.ServiceKey(), hint),
			"service", u.ServiceKey(), "type", mt.typ, "methods", mt.ptrOnly)
	}
	return e, nil
}

// MethodNames returns the sorted names of the methods Export would serve
// for impl (the exported methods of the shape Export takes), or Export's
// error for a value it would refuse.
func MethodNames(impl any) ([]string, error) {
	mt, err := newMethodTable(impl)
	if err != nil {
		return nil, err
	}
	return slices.Clone(mt.names), nil
}

// ExportInvoker serves a generic service: requests for u's service key are
// passed to inv with their arguments decoded as generic values (maps,
// slices, strings, numbers). u's "methods" parameter, when present, lists
// the methods; other methods are answered SERVICE_NOT_FOUND before inv is
// called. Otherwise as Export. The smallest generic provider is one
// function, spi.InvokerFunc (Dubbo's GenericService.$invoke).
func (n *Node) ExportInvoker(ctx context.Context, u spi.URL, inv spi.Invoker) (*Exporter, error) {
	ctx = withLateWindow(ctx)
	if inv == nil {
		return nil, errors.New("kernel: export: nil invoker")
	}
	methods := u.Methods()
	slices.Sort(methods)
	return n.export(ctx, u, methods, func(pu spi.URL, filters []chainFilter) service {
		return newService(pu, nil, inv, filters)
	})
}

// export checks u, builds the provider filter chain, listens, makes the
// service with mk (from the provider URL as published and the chain) and
// registers it.
func (n *Node) export(ctx context.Context, u spi.URL, methods []string, mk func(spi.URL, []chainFilter) service) (_ *Exporter, err error) {
	key := u.ServiceKey()
	if u.Interface() == "" {
		return nil, noInterfaceError("export", u)
	}
	if err := spi.CheckInterface(u.Interface()); err != nil {
		return nil, fmt.Errorf("kernel: export: %w", err)
	}
	if u.Interface() == HealthService && !slices.Contains(methods, HealthCheck) {
		// It would replace the built-in health service on the address
		// (healthservice.go) with one every probe fails against.
		return nil, fmt.Errorf("kernel: export %s: %s is the name of the health service every provider address serves (airnode health, readiness probes): a service exported under it replaces it, and this one has no method %s (methods: %s): give it another name, or a method %s(service string) string",
			key, HealthService, HealthCheck, strings.Join(methods, ", "), HealthCheck)
	}
	if err := checkListenAddress(u); err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", key, err)
	}
	if err := n.checkProtocol(u); err != nil {
		// no consumer could refer to it
		return nil, fmt.Errorf("kernel: export %s: %w", key, err)
	}
	if err := providerGroupVersion(u); err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		// as Refer does: a program that passes its signal.NotifyContext
		// context must not publish a provider after the signal came
		// (tester69 finding 5)
		return nil, fmt.Errorf("kernel: export %s: %w before the export began: nothing listened or registered", key, err)
	}
	pu, err := n.providerURL(u, methods)
	if err != nil {
		return nil, err
	}
	adv, err := readAdvertise(pu) // the address published instead of the one listened on
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", key, err)
	}
	pu = pu.Without(keyAdvertise)
	var reg spi.Registry
	regURL := n.registryURL
	if v, ok := u.Param("registry"); ok && v != "" {
		if regURL, err = spi.Parse(v); err != nil {
			return nil, fmt.Errorf("kernel: export %s: registry: %w", key, err)
		}
		pu = pu.Without("registry")
	}
	// Consumers build their invokers from this URL (merged with theirs):
	// check its keys with the same code now rather than publish a
	// provider nobody can use.
	// Every refusal at once, one a line, as Refer's (tester83 #5).
	var refused refusals
	if _, err := readInvokerSettings(n.cat, pu.Without(tlsconf.ProviderFileKeys...)); err != nil {
		refused.addIn("kernel: export "+key+": ", err)
	}
	if err := conflictingMethodForms(n.cat, pu); err != nil {
		refused.addIn("kernel: export "+key+": ", err)
	}
	if err := checkMethodValues(pu, nil); err != nil {
		refused.addIn("kernel: export "+key+": ", err)
	}
	if err := n.CheckMethodKeys(pu, methods); err != nil {
		refused.addIn("kernel: export "+key+": ", err)
	}
	if err := refused.err(); err != nil {
		return nil, err
	}
	for _, k := range UnreadKeys(n.cat, pu) {
		n.logger.Warn("URL key "+UnreadKeyWords+"; ignored", append([]any{"service", key, "key", k.Key}, unreadAttrs(k)...)...)
	}
	for _, t := range n.registryKeysOf(pu) {
		n.logger.Warn("URL key is a registry's, read from the registry URL only (ignored on a service URL)", "service", key, "key", t[0], "registry", t[1])
	}
	for _, t := range n.bareMillis(pu, spi.Provider) {
		n.logger.Warn(t[2], "service", key, "key", t[0])
	}
	n.warnUnsupportedKeys(pu, key, regURL)
	n.warnProviderKeysNoEffect(pu, key)
	n.warnHeartbeatKeysUnread(pu, key, "service")
	// The provider filter chain, plugin filters included (their plugin
	// builds them, within a bound), is built before anything listens or
	// registers: a filter that cannot be built fails the export, as
	// Dubbo's export fails when a filter cannot be created, instead of a
	// registered provider failing every call.
	planned := n.registryEntry(adv.apply(n.plannedURL(pu)))
	filters, err := n.filters(planned, spi.Provider)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", key, err)
	}
	if !regURL.IsZero() {
		if reg, err = n.registry(ctx, "export "+key, regURL); err != nil {
			return nil, err
		}
	}
	srv, err := n.serverFor(ctx, pu)
	if err != nil {
		return nil, err
	}
	// A failed export closes the listener it opened when nothing is
	// exported on it (releaseServer): a port that accepts and answers
	// every call SERVICE_NOT_FOUND until Shutdown helps nobody, and a
	// second Export on the address must be able to listen again.
	defer func() {
		if closed := n.releaseServer(srv, err == nil); closed != "" {
			err = fmt.Errorf("%w; %s", err, closed)
		}
	}()
	// The provider's own TLS files stay out of the published URL, so that
	// consumers never take them for theirs (MergeURL keeps provider keys).
	pu = adv.apply(pu.WithAddress(srv.host, srv.port)).Without(tlsconf.ProviderFileKeys...)
	// Published with its values in Dubbo's form (durations as integer
	// ms, sizes as bytes), which Dubbo and Dubbo Admin read from the
	// shared registry; the server above was built from the URL as given.
	pu = n.registryEntry(pu)
	// local is pu with the keys of the provider's own machine
	// (spi.KeyDoc.ProviderLocal: the access log's file path), which its
	// filters read and the registry entry leaves out (tester92 #5)
	local := pu
	pu = pu.Without(n.providerLocalKeys(pu)...)
	if reg != nil {
		n.warnLoopbackPublished(key, u, pu, adv, regURL)
	}
	if !local.Equal(planned) {
		// port 0 on a new server: the filters see the port it got
		if filters, err = n.filters(local, spi.Provider); err != nil {
			return nil, fmt.Errorf("kernel: export %s: %w", key, err)
		}
	}
	svc := mk(pu, filters)
	if err := srv.add(key, svc); err != nil {
		if u.Port() == 0 {
			// tester69: three providers of one interface on one node,
			// each to port 0, as net.Listen(":0") would give
			err = fmt.Errorf("%w (port 0 is the free port this node's first export to port 0 on %s got, shared by its later ones: export the same service again on another node, or on an explicit port)", err, srv.host)
		}
		return nil, err
	}
	e := &Exporter{node: n, url: pu, key: key, srv: srv, reg: reg, regName: regURL.Scheme()}
	if reg != nil {
		step := fmt.Sprintf("registry %q Register of %s", regURL.Scheme(), key)
		unregister := func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
			defer cancel()
			if err := reg.Unregister(uctx, pu); err != nil {
				n.logger.Warn("cannot withdraw a provider entry registered after its Export failed", "service", key, "err", err)
			}
		}
		rctx, wctx, cancel := boundStep(ctx, n.registerBound(regURL))
		err := withinUndo(wctx, n.logger, "export "+key, step, func() error { return reg.Register(rctx, pu) }, unregister)
		cancel()
		if err != nil {
			var left *LeftRunningError
			if errors.As(err, &left) {
				if u, ok := reg.(spi.RegistryUnreachable); ok {
					left.Why = u.Unreachable() // the cause, not only that it did not return (as Refer's)
				}
				srv.remove(key)
				return nil, err
			}
			srv.remove(key)
			return nil, fmt.Errorf("kernel: register %s in %s: %w", key, regURL, err)
		}
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = e.Unexport(ctx)
		return nil, errClosed
	}
	n.exporters = append(n.exporters, e)
	n.mu.Unlock()
	n.logger.Info("exported", "service", key, "url", pu.Redacted())
	return e, nil
}

// registerSlack is what a provider's Register gets past its registry
// URL's connect.timeout, when that is longer than the node's register
// bound (registerBound).
const registerSlack = 2 * time.Second

// registerBound is the bound of a provider's Register in the registry of
// regURL (boundStep): the node's (WithRegisterTimeout), or regURL's
// connect.timeout plus registerSlack when that is longer, so that a
// registry told to wait that long for a session (zookeeper's
// connect.timeout, up to a minute) is not cut short. A malformed
// connect.timeout is the registry's Build's to refuse; it is not read
// here.
func (n *Node) registerBound(regURL spi.URL) time.Duration {
	d := n.registerTimeout
	if d <= 0 {
		return 0
	}
	if _, set := regURL.Param("connect.timeout"); !set {
		return d
	}
	if c, err := regURL.Duration("connect.timeout", 0); err == nil && c+registerSlack > d {
		d = c + registerSlack
	}
	return d
}

// checkListenAddress refuses a provider URL that names no address at all
// (airnode:///demo.Echo): it would listen on every interface, on a port
// the system picks, which nobody asked for. A URL
// cannot tell "no port" from port 0 (spi.HostPort), so a host without a
// port is port 0 and stays accepted; an empty host with a port
// (airnode://:20880/..., serve's default listen ":20880") listens on every
// interface, as Go's ":20880" does.
func checkListenAddress(u spi.URL) error {
	if u.Host() != "" || u.Port() != 0 {
		return nil
	}
	return fmt.Errorf("%s names no address to listen on: want host:port, such as %s://127.0.0.1:20880/%s; port 0 picks a free port (127.0.0.1:0), host 0.0.0.0 listens on every interface (0.0.0.0:20880, or 0.0.0.0:0 on a free port)",
		u.Without(u.Keys()...).String(), u.Scheme(), u.Interface())
}

// providerURL adds and checks the provider's identity and state keys.
func (n *Node) providerURL(u spi.URL, methods []string) (spi.URL, error) {
	w, err := u.Int("weight", DefaultWeight)
	if err != nil || w < 0 {
		v, _ := u.Param("weight")
		return spi.URL{}, fmt.Errorf("kernel: export %s: weight %q: want a non-negative integer", u.ServiceKey(), v)
	}
	if w > maxWeight {
		// the balancers clamp it (warmup.MaxWeight): say so once, and
		// publish what they use (tester62: it was taken silently)
		n.logger.Warn(fmt.Sprintf("export %s: weight %d is over %d, the most a balancer uses: published as %d", u.ServiceKey(), w, maxWeight, maxWeight),
			"service", u.ServiceKey(), "weight", w) // n.logger says component=kernel
		w = maxWeight
	}
	if _, err := u.Duration("warmup", DefaultWarmup); err != nil {
		return spi.URL{}, fmt.Errorf("kernel: export %s: %w", u.ServiceKey(), err)
	}
	p := map[string]string{
		"timestamp": strconv.FormatInt(n.now().UnixMilli(), 10),
		"weight":    strconv.FormatInt(w, 10),
		spi.KeySide: string(spi.Provider),
		"transport": n.cat.Transport.Choose(u, "").Name,
		"pid":       strconv.Itoa(pid),
	}
	if v, ok := u.Param("warmup"); ok {
		p["warmup"] = v // as written, once validated
	} else {
		p["warmup"] = defaultWarmupText
	}
	if len(methods) > 0 {
		p[spi.KeyMethods] = strings.Join(methods, ",")
	}
	if v, _ := u.Param(spi.AttachmentToken); v == "true" || v == "default" {
		// Dubbo's token=true: a random token, published in the provider
		// URL; consumers that find it through the registry send it.
		p[spi.AttachmentToken] = randomToken()
	}
	return u.WithParams(p), nil
}

// CheckMethodKeys returns an error for each method-level key of provider
// URL u that names a method the service does not have, methods being the
// service's (its method table at Export): "methods.<m>.<key>" for any key,
// and Dubbo's "<m>.<key>" when key is one the kernel or an extension reads
// per method (MethodKeys: timeout, retries, loadbalance, ...), the whole
// key is not itself a key airnode reads (connect.timeout,
// session.timeout) and m is an exported Go name or a near miss of one of
// methods ("sayHelo"; "sayhello" for SayHello: the same but for case), so
// a plugin's own dotted key (acme.timeout) passes. Such a key would set
// nothing, silently. Each error names the key, the service's methods and
// the method meant: the one spelt the same but for case, else one close
// by internal/suggest's rule. As Dubbo's ServiceConfig refuses a <dubbo:method>
// whose name the interface lacks (AbstractInterfaceConfig
// checkInterfaceAndMethods). Nil when methods is empty (a generic service
// that lists none).
func (n *Node) CheckMethodKeys(u spi.URL, methods []string) error {
	if len(methods) == 0 {
		return nil
	}
	keys := methodKeyReader{n: n}
	var errs []error
	for _, k := range u.Keys() {
		m, key, dubbo, ok := keys.split(k)
		if !ok || slices.Contains(methods, m) || dubbo && !exportedName(m) && methodMeant(m, methods) == "" {
			continue
		}
		msg := fmt.Sprintf("URL key %q sets %s for method %s, but service %s has no method %s (methods: %s)",
			k, key, m, u.ServiceKey(), m, strings.Join(methods, ", "))
		if c := methodMeant(m, methods); c != "" {
			msg += fmt.Sprintf("; did you mean %q?", c)
		}
		v, _ := u.Param(k)
		errs = append(errs, &spi.KeyError{Keys: []string{k}, Values: []string{v}, Msg: msg})
	}
	return errors.Join(errs...)
}

// MethodKeys returns the URL keys read per method, so that Dubbo's
// "<method>.<key>" and "methods.<method>.<key>" apply: the kernel's keys
// whose KernelKeyDocs say "method-level allowed" (timeout, retries,
// hash.*, executes, actives), the keys of the points chosen per method
// (cluster, loadbalance, codec) and the keys extensions declare with
// "method-level allowed" in their spi.KeyDoc (failover's idempotent,
// forking's forks...), as a new slice with repeats.
func (n *Node) MethodKeys() []string {
	var keys []string
	for _, d := range KernelKeyDocs() {
		if strings.Contains(d.Doc, methodLevelAllowed) {
			keys = append(keys, d.Key)
		}
	}
	keys = append(keys, n.cat.Cluster.Key(), n.cat.LoadBalance.Key(), n.cat.Codec.Key())
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if strings.Contains(k.Doc, methodLevelAllowed) {
					keys = append(keys, k.Key)
				}
			}
		}
	}
	return keys
}

// methodLevelAllowed is what a spi.KeyDoc's Doc says of a key also read
// per method.
const methodLevelAllowed = "method-level allowed"

// randomToken returns 16 random bytes, hex-encoded (32 characters).
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)
}

// keyMinPingInterval is the provider's ping-flood guard: a consumer whose
// pings arrive faster than this on an idle connection (no call running or
// arriving in between) is closed after a few strikes (gRPC's
// too_many_pings). Duration, default 1s or the provider's own heartbeat
// interval when shorter, 0 = off.
const keyMinPingInterval = "heartbeat.min.ping.interval"

// keyConnectionConcurrency caps the requests one consumer connection may
// have in flight on the provider (exchange.Options.MaxConcurrent; issue 8
// item 4): beyond it a call is answered SERVER_THREADPOOL_EXHAUSTED at once.
// Integer, default 16384 (exchange.DefaultMaxConcurrent), 0 or negative =
// unlimited.
const keyConnectionConcurrency = "connection.concurrency"

// keyUnsentLimit bounds the answers a listening address holds unsent for
// all its consumers together (exchange.Options.UnsentLimit): a size,
// absent: exchange.DefaultUnsentLimit (256 MiB), 0: no such bound.
const keyUnsentLimit = "unsent.limit"

// keyDispatcher chooses where provider requests run, as Dubbo's
// "dispatcher" key does: "adaptive" (default; ours) on the connection's
// reader until a request runs over a millisecond, then on the worker pool
// for a second (exchange.Options.Adaptive); "all" (Dubbo's default) always
// on the server's worker pool; "direct" always on the reader
// (exchange.Options.Direct), for handlers that never block: a blocked
// handler stops its connection.
const keyDispatcher = "dispatcher"

// dispatchers are the values keyDispatcher accepts, the default first.
var dispatchers = []string{"adaptive", "all", "direct"}

// Dispatchers returns the values the provider URL key "dispatcher"
// accepts, the default first: adaptive, all, direct. The slice is a copy.
func Dispatchers() []string { return slices.Clone(dispatchers) }

// Dispatcher returns the dispatcher provider URL pu selects (the default,
// adaptive, when pu has no "dispatcher" key), or the *spi.ParamError
// Export refuses it with: the allowed values and a close match, or, for
// one of Dubbo's dispatcher names airnode does not offer (message,
// execution, connection), what that dispatcher does and the airnode value
// nearest to it.
func Dispatcher(pu spi.URL) (string, error) {
	d := pu.ParamOr(keyDispatcher, dispatchers[0])
	if slices.Contains(dispatchers, d) {
		return d, nil
	}
	want := "one of " + strings.Join(dispatchers, ", ")
	if h, ok := dubboDispatchers[d]; ok {
		want += fmt.Sprintf(`; Dubbo's %q dispatcher (%s) is not offered: the nearest is %q (%s)`, d, h.does, h.use, dispatcherDoes[h.use])
	} else if m := extension.Closest(d, dispatchers); m != "" {
		want += fmt.Sprintf(" (did you mean %q?)", m)
	}
	return "", &spi.ParamError{Key: keyDispatcher, Value: d, Want: want}
}

// dispatcherDoes says, for Dispatcher's hints, where each airnode
// dispatcher runs a provider's requests.
var dispatcherDoes = map[string]string{
	"all": "every request on the server's worker pool; answers, heartbeats and connection events stay on the connection's own reader and writer",
}

// dubboDispatchers maps Dubbo's dispatcher names that airnode does not
// offer (Dubbo's all and direct it does) to what they do and the nearest
// airnode dispatcher. Dubbo (org.apache.dubbo.remoting.Dispatcher): all
// sends every channel event (requests, responses, connect, disconnect,
// heartbeats) to the thread pool; direct runs them all on the I/O thread;
// message sends only requests and responses to the pool; execution only
// requests; connection queues connect and disconnect events in order on
// one thread and sends every other message to the pool. For requests, the
// only events an airnode provider's code sees, the three all run on a
// pool, as airnode's "all" does.
var dubboDispatchers = map[string]struct{ does, use string }{
	"message":    {"requests and responses on its thread pool, connection events and heartbeats on the I/O thread", "all"},
	"execution":  {"only requests on its thread pool, everything else on the I/O thread", "all"},
	"connection": {"connect and disconnect events queued in order on one thread, requests on its thread pool", "all"},
}

// ServerKeys returns the provider URL keys that configure the server on a
// listening address rather than one service (dispatcher, payload,
// connection.concurrency, heartbeat.min.ping.interval, heartbeat,
// heartbeat.interval, heartbeat.timeout: the server's heartbeat runs per
// connection, whichever service a call is for; accepts, accepts.per.ip:
// the connections it serves). The slice is a copy.
func ServerKeys() []string { return slices.Clone(serverKeys) }

// serverKeys are the provider URL keys that configure the server on a
// listening address, not one service: every service exported on the
// address shares them (as Dubbo's protocol settings are shared by the
// services on one port). A service that sets one of them to another value
// than the server's is refused rather than silently served otherwise.
var serverKeys = []string{keyDispatcher, "payload", keyConnectionConcurrency, keyMinPingInterval, "heartbeat", "heartbeat.interval", "heartbeat.timeout", keyAccepts, keyAcceptsPerIP, keyUnsentLimit, keyHealthService}

// CheckServerKeys returns the error Export refuses provider URL pu with
// when it sets a method-level form of a ServerKeys key
// ("methods.Sleep.dispatcher", or Dubbo's "Sleep.dispatcher" for a method
// pu lists): the server serves every method of every service on its
// address alike, so the key would have no effect. Nil otherwise.
func CheckServerKeys(pu spi.URL) error {
	methods := pu.Methods()
	for _, k := range pu.Keys() {
		if m, sk, ok := spi.MethodLevelKey(k, methods); ok && slices.Contains(serverKeys, sk) {
			return fmt.Errorf("URL key %q sets %s for method %s, but %s is per listening address (it has no method-level form): set %q for the whole address", k, sk, m, sk, sk)
		}
	}
	return nil
}

// sameServerKeys checks that pu, exported on s, sets no serverKeys value
// other than s's own (the dispatcher compared after its default).
func sameServerKeys(s *server, pu spi.URL) error {
	k, v, have, set := DifferentServerKey(s.first, pu)
	if k == "" {
		return nil
	}
	was := fmt.Sprintf("%q", have)
	if !set {
		was = "its default"
	}
	return fmt.Errorf("URL key %q is %q, but the server already listening on %s:%d (made for %s) uses %s: %s are per listening address; export this service on another address or with the same values",
		k, v, s.host, s.port, s.first.ServiceKey(), was, strings.Join(append(slices.Clone(serverKeys), listenerKeys...), ", "))
}

// DifferentServerKey returns the first ServerKeys key that u sets to
// another value than first, the provider URL that made the server on the
// address (the dispatcher compared after its default), else the first
// ListenerKeys key they disagree on, set or not: the key, u's value,
// first's value and whether first set it. key is "" when u agrees with
// first. Export refuses u for it; serve checks it before exporting.
func DifferentServerKey(first, u spi.URL) (key, value, have string, set bool) {
	for _, k := range serverKeys {
		v, ok := u.Param(k)
		if !ok {
			continue
		}
		have, set := first.Param(k)
		if k == keyDispatcher && !set {
			have, set = dispatchers[0], true
		}
		if k == keyHealthService && !set {
			have, set = "true", true
		}
		if v != have {
			return k, v, have, set
		}
	}
	return differentListenerKey(first, u)
}

// listenerKeys are the provider keys a transport reads once per
// listener, when it builds the server from the URL of the first export on
// its address: TLS on or off, the provider's certificate, key and
// client CA, and the names a client certificate must hold. A later
// service that differs would be served with the first's TLS while
// publishing its own.
var listenerKeys = []string{tlsconf.KeyTLS, tlsconf.KeyCert, tlsconf.KeyKey, tlsconf.KeyCA, tlsconf.KeyClientNames}

// ListenerKeys returns the provider URL keys a transport reads once per
// listener (TLS on or off, the provider's certificate, key and client
// CA, the client certificate names it allows): every service on an
// address must agree on them, set or not (DifferentServerKey).
func ListenerKeys() []string { return slices.Clone(listenerKeys) }

// differentListenerKey is DifferentServerKey for listenerKeys: the first
// one u and first disagree on, set or not (tls compared as a boolean,
// false when unset), u's value, first's and whether first set it; key is
// "" when they agree.
func differentListenerKey(first, u spi.URL) (key, value, have string, set bool) {
	for _, k := range listenerKeys {
		v, vset := u.Param(k)
		h, hset := first.Param(k)
		if k == tlsconf.KeyTLS {
			vb, verr := u.Bool(k, false)
			hb, herr := first.Bool(k, false)
			if verr == nil && herr == nil && vb != hb { // a malformed value is config.CheckURL's
				return k, strconv.FormatBool(vb), strconv.FormatBool(hb), hset
			}
			continue
		}
		if (vset || hset) && v != h {
			return k, v, h, hset
		}
	}
	return "", "", "", false
}

// service is one exported service on a server.
type service interface {
	// serve serves req with pc's context, invocation and argument room.
	serve(pc *providerCall, req *exchange.Request) spi.Result
}

// providerCall is a provider call's invocation and room for two
// arguments, pooled (providerCalls): nobody keeps an invocation after its
// call returns (spi.Invocation), and the pool spares the provider 128
// bytes of garbage a call (its collector ran every ~5,000 calls at c=100:
// bench/README, the thirteenth pass). The call's context is allocated on
// its own: the method may keep it.
type providerCall struct {
	ctx  *callCtx
	inv  spi.Invocation
	args [2]any
}

// providerCalls pools server.Serve's providerCalls.
var providerCalls = sync.Pool{New: func() any { return new(providerCall) }}

// exportedService decodes a request's arguments (into the method's
// parameter types, or generic values) and runs the provider filter chain
// around the service's invoker.
type exportedService struct {
	key     string
	table   *methodTable  // nil for a generic invoker
	methods []string      // generic: allowed methods, nil for any
	invoker spi.Invoker   // filters + local or generic invoker
	unknown unknownFields // struct fields consumers sent that table's types lack, logged once each
	// observers are the filters told of a call answered before the chain
	// (rejectedObserver: the accesslog filter's line for it)
	observers []rejectedObserver
	// keepToken: the provider URL has a token, so the token filter reads
	// the consumer's "token" attachment (and removes it); without one the
	// attachment is dropped with the other reserved keys (dropReserved)
	keepToken bool
	// filters are the chain's filters, outermost first: serve names
	// the one that refused a call (filterRefusal)
	filters []chainFilter
}

// rejectedObserver is an optional interface of a provider filter: a call
// that its service answers before the filter chain runs — a method the
// service lacks (SERVICE_NOT_FOUND), arguments that do not decode
// (BAD_REQUEST) — is reported to it with its error, so that the
// accesslog filter writes a line for it as for any other call (before,
// an operator looking for consumers that call a removed method found
// them only in the consumers' logs). inv has the service key, the method,
// the attachments and "remote", and no arguments (they were not
// decoded). A call to a service not exported on the server has no
// service, hence no filters, and is not reported (it is counted, as every
// rejected call, in internal/counters.Provider).
type rejectedObserver interface {
	Rejected(ctx context.Context, inv *spi.Invocation, err error)
}

// newService returns the service of provider URL pu: filters (the
// provider chain, outermost first) around inv, mt's methods (nil for a
// generic invoker, which serves pu's "methods").
func newService(pu spi.URL, mt *methodTable, inv spi.Invoker, filters []chainFilter) service {
	s := &exportedService{key: pu.ServiceKey(), table: mt, invoker: inv, filters: filters}
	if len(filters) > 0 {
		s.invoker = providerChain(filters, inv) // so that serve tells a filter's refusal from the method's error
	}
	if tok, ok := pu.Param(spi.AttachmentToken); ok && tok != "" && tok != "false" {
		s.keepToken = true
	}
	for _, f := range filters {
		if o, ok := f.Filter.(rejectedObserver); ok {
			s.observers = append(s.observers, o)
		}
	}
	if mt == nil {
		s.methods = pu.Methods()
	}
	return s
}

// plannedURL returns provider URL pu as Export will publish it, without
// the provider's TLS files, when its address is known before listening:
// that of the server already listening for pu's transport and address,
// or for a fixed port the host advertised would give it (the machine's
// address for an unspecified host). With port 0 and no server yet, pu's
// own address: Export builds the filters again once the port is known.
func (n *Node) plannedURL(pu spi.URL) spi.URL {
	out := pu.Without(tlsconf.ProviderFileKeys...)
	if trb, _, err := n.cat.Transport.Select(pu, ""); err == nil {
		n.mu.Lock()
		s := n.servers[trb.Name()+"|"+pu.Address()]
		n.mu.Unlock()
		if s != nil {
			return out.WithAddress(s.host, s.port)
		}
	}
	if pu.Port() == 0 {
		return out
	}
	host := pu.Host()
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = localIP()
	}
	return out.WithAddress(host, pu.Port())
}

func (s *exportedService) serve(pc *providerCall, req *exchange.Request) spi.Result {
	if len(req.Attachments) > 0 {
		dropReserved(req.Attachments, s.keepToken)
	}
	res := s.decodeAndInvoke(pc, req)
	if res.Err == nil {
		return res
	}
	if !pc.ctx.served && len(s.observers) > 0 {
		s.reportRejected(pc, req, res.Err)
	}
	if len(s.filters) > 0 && pc.ctx.served {
		if at := int(pc.ctx.reached.Load()); at <= len(s.filters) {
			res.Err = filterRefusal(s.key, req.Method, s.filters[max(at, 1)-1].name, res.Err)
		}
	}
	return res
}

// filterRefusal returns err, the error provider filter name (its
// extension name in the catalog) answered a call of service's method with
// before the method ran (it did not call next), as the consumer is told
// it. An error
// carrying an *spi.Error keeps it: the filter chose the status (the
// token filter's BAD_REQUEST, a limit's SERVER_THREADPOOL_EXHAUSTED). A
// plain error stays SERVICE_ERROR, the status Dubbo answers an exception
// thrown in its provider's chain with (HeaderExchangeHandler), and the
// one the method's own errors get (spi.MethodError): none of Dubbo's
// statuses means "a filter refused the call" (BAD_REQUEST says the
// request was malformed, SERVER_ERROR that the provider failed, and
// SERVICE_NOT_FOUND or SERVER_THREADPOOL_EXHAUSTED would have failover run
// it on another provider, whose filters likely refuse it too). So its
// message says it and names the filter: "kernel: shop.Cart.Add did not
// run: provider filter "quota" refused the call: <the filter's text>",
// where a method's error reads "SERVICE_ERROR: <its text>". The filter's
// error stays the Cause, which does not cross the wire.
func filterRefusal(service, method, name string, err error) error {
	if _, ok := errors.AsType[*spi.Error](err); ok {
		return err
	}
	return &spi.Error{Status: spi.StatusServiceError, Cause: err,
		Message: fmt.Sprintf("kernel: %s.%s did not run: provider filter %q refused the call: %v", service, method, name, err)}
}

// ranInvoker is the end of a provider filter chain: it marks its call as
// having reached the service's invoker (callCtx.reached = pos, one past
// the last filter) before invoking it, so that serve tells an error of
// the method from one a filter answered without calling it
// (filterRefusal).
type ranInvoker struct {
	spi.Invoker
	pos int32
}

func (r ranInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	reach(ctx, r.pos)
	return r.Invoker.Invoke(ctx, inv)
}

// reach records in ctx's provider call (callCtx.reached) that the call
// got to place pos of its chain, unless it got further already (a
// filter may call next twice, or on another goroutine).
func reach(ctx context.Context, pos int32) {
	c, ok := ctx.(*callCtx) // no filter wrapped the context: the usual case
	if !ok {
		if c, _ = ctx.Value(ranKey{}).(*callCtx); c == nil {
			return
		}
	}
	for {
		at := c.reached.Load()
		if at >= pos || c.reached.CompareAndSwap(at, pos) {
			return
		}
	}
}

// ranKey asks a provider call's context for its callCtx (ranInvoker),
// through the contexts filters wrapped it in.
type ranKey struct{}

// dropReserved deletes from att, the attachments a request carried, every
// key the kernel reserves (spi.ReservedAttachment, in any case: remote,
// timeout, token), except "token" itself when keepToken (the provider's
// token filter checks and removes it). A Go consumer cannot send them
// (Reference.Invoke refuses them), but any other peer writes what it
// likes in a raw frame: without this a forged "timeout" or "Remote"
// reached the method. The kernel then sets "remote",
// the consumer's address, itself. Free for a call without attachments.
func dropReserved(att map[string]string, keepToken bool) {
	for k := range att {
		if spi.ReservedAttachment(k) && (k != spi.AttachmentToken || !keepToken) {
			delete(att, k)
		}
	}
}

// reportRejected tells s's observers of req, answered with err before the
// filter chain (rejectedObserver).
func (s *exportedService) reportRejected(pc *providerCall, req *exchange.Request, err error) {
	att := make(map[string]string, len(req.Attachments)+1)
	for k, v := range req.Attachments {
		att[k] = v
	}
	if req.Remote != "" {
		att[spi.AttachmentRemote] = req.Remote
	}
	inv := &spi.Invocation{Service: req.Service, Method: req.Method, Attachments: att, RequestID: req.ID, Local: req.Local, ConsumerApplication: req.Application}
	for _, o := range s.observers {
		o.Rejected(pc.ctx.Context, inv, err)
	}
}

// decodeAndInvoke is serve without the report of a rejected call: it
// decodes the arguments and runs the chain, or answers the call before
// it (pc.ctx.served stays false then).
func (s *exportedService) decodeAndInvoke(pc *providerCall, req *exchange.Request) spi.Result {
	var (
		args  []any
		types []reflect.Type
	)
	if s.table != nil {
		m, err := s.table.lookup(s.key, req.Method)
		if err != nil {
			return rejected(err)
		}
		if req.Codec != nil && m.codecID != 0 && req.Codec.ID() != m.codecID {
			if err := m.otherCodec(s.key, req.Codec); err != nil {
				return rejected(err)
			}
		}
		if args, err = m.decodeArgs(s.key, req.NumArgs, req.Args, pc.args[:], spi.GenericInvocation(req.Attachments)); err != nil {
			if args, err = s.lenient(pc, m, req, err); err != nil {
				return rejected(err)
			}
		}
		types = m.args
	} else {
		if s.methods != nil && !slices.Contains(s.methods, req.Method) {
			return rejected(noMethodError(s.key, req.Method, s.methods))
		}
		if req.NumArgs < 0 || req.NumArgs > 1<<16 {
			return rejected(spi.Errorf(spi.StatusBadRequest, "%s.%s: %d arguments", s.key, req.Method, req.NumArgs))
		}
		if args = pc.args[:]; req.NumArgs > len(args) {
			args = make([]any, req.NumArgs)
		}
		args = args[:req.NumArgs]
		for i := range args {
			if err := req.Args.Decode(&args[i]); err != nil {
				return rejected(argError(s.key, req.Method, i, "", err))
			}
		}
	}
	pc.inv = spi.Invocation{Service: req.Service, Method: req.Method, Args: args, ArgTypes: types, Attachments: req.Attachments, Began: req.Began, Due: req.Due,
		RequestID: req.ID, Local: req.Local, ConsumerApplication: req.Application}
	pc.ctx.served, pc.ctx.inv = true, &pc.inv
	if req.Remote == "" {
		return s.invoker.Invoke(pc.ctx, &pc.inv)
	}
	if pc.inv.Attachments != nil {
		pc.inv.Attachments[spi.AttachmentRemote] = req.Remote
		return s.invoker.Invoke(pc.ctx, &pc.inv)
	}
	// Most calls arrive without attachments: the map that carries
	// "remote" is pooled (BenchmarkProviderServe: 2 allocations, 336 B
	// per call otherwise). Nobody keeps an invocation, or its map, after
	// its call returns (spi.Invocation); a result that carries the map
	// itself keeps it.
	m := attachmentMaps.Get().(map[string]string)
	m[spi.AttachmentRemote] = req.Remote
	pc.inv.Attachments = m
	pc.ctx.remote = req.Remote
	pc.ctx.pooled.Store(attPooled)
	res := s.invoker.Invoke(pc.ctx, &pc.inv)
	// Not when the method asked for it (spi.IncomingAttachments, callCtx.incoming).
	if (res.Attachments == nil || reflect.ValueOf(res.Attachments).UnsafePointer() != reflect.ValueOf(m).UnsafePointer()) &&
		pc.ctx.pooled.CompareAndSwap(attPooled, attRecycled) {
		clear(m)
		attachmentMaps.Put(m)
	}
	return res
}

// rejected counts a request answered with err before its service's filter
// chain — SERVICE_NOT_FOUND or BAD_REQUEST, which no metrics filter sees —
// in the process-wide internal/counters.Provider, by status only (the
// names come from the client), and returns err as the request's result.
// Only failing requests come here: a good call counts nothing.
func rejected(err error) spi.Result {
	switch spi.StatusOf(err) {
	case spi.StatusServiceNotFound:
		counters.Provider.ServiceNotFound.Inc()
	case spi.StatusBadRequest:
		counters.Provider.BadRequest.Inc()
	}
	return spi.Result{Err: err}
}

// attachmentMaps pools the attachment maps of calls that arrive without
// attachments (exportedService.serve).
var attachmentMaps = sync.Pool{New: func() any { return make(map[string]string, 4) }}

// localInvoker calls a Go value's methods through its method table.
type localInvoker struct {
	url   spi.URL
	table *methodTable
	stats spi.Stats
}

func (l *localInvoker) URL() spi.URL { return l.url }

func (l *localInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	m, err := l.table.lookup(inv.Service, inv.Method)
	if err != nil {
		return spi.Result{Err: err}
	}
	// The exchange's reading when it began the request (Invocation.Began),
	// and one read at the end that the filters above share (Result.Ended).
	start := inv.Began
	if start == 0 {
		start = spi.Mono()
	}
	l.stats.BeginAt(start)
	res := m.call(m.incoming(ctx, inv.Attachments), inv.Service, inv.Args)
	if res.Err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The consumer's deadline passed while the method ran: answer as
		// the consumer's own timer would, not with the
		// method's "context deadline exceeded".
		res.Err = &spi.Error{Status: spi.StatusServerTimeout,
			Message: fmt.Sprintf("%s.%s did not finish before the consumer's deadline", inv.Service, inv.Method), Cause: res.Err}
	}
	end := spi.Mono()
	res.Ended = end
	l.stats.EndAt(spi.MonoTime(end), end-start, res.Err == nil)
	return res
}

func (l *localInvoker) Available() bool   { return true }
func (l *localInvoker) Stats() *spi.Stats { return &l.stats }
func (l *localInvoker) Close() error      { return nil }

var _ spi.Invoker = (*localInvoker)(nil)

// flushGrace lets queued answers reach the wire before the server's
// channels close.
const flushGrace = 20 * time.Millisecond

// abandonGrace is how long a server whose drain deadline passed gives the
// calls it abandoned (their contexts cancelled) to return, so that their
// consumers are answered "shutting down" before the channels close.
const abandonGrace = 200 * time.Millisecond

// errAbandoned is the cancellation cause of a call abandoned by shutdown
// (context.Cause of its context). It is an *spi.Error of status
// SERVER_ERROR, the status its consumer is answered, so that a filter
// telling a consumer that went away (a cancellation without such a cause:
// the metrics filter's cancelled calls) from the provider giving up can
// count it as that failure. Its message is the shutdown timeout's;
// server.abandonCause gives the one of the reason that applied.
var errAbandoned = &spi.Error{Status: spi.StatusServerError, Message: "kernel: provider shutting down: shutdown timeout passed", Cause: spi.ErrProviderShutdown}

// server is one exchange server (one listen address and transport) shared
// by the services exported on it; it dispatches requests by service key.
type server struct {
	host      string
	port      int
	transport string // its transport's name, for errors
	l         *listener
	srv       *exchange.Server
	log       *slog.Logger
	first     spi.URL       // the provider URL that made the server: its serverKeys hold for every service on it
	done      chan struct{} // Serve returned

	// health is the health service (HealthService), nil when
	// health.service=false: looked for only when no exported service has
	// a request's key, so that it costs other calls nothing
	health service

	mu       sync.RWMutex
	services map[string]service
	draining bool // shutdown began: later requests are not waited for by preDrain
	// before counts the requests that started before draining; the
	// last of them to end once draining closes drained (no goroutine
	// waits for them: an abandoned call that ignores its context leaves
	// only its own goroutine behind).
	before      atomic.Int64
	drainBegun  atomic.Bool // draining, for beforeDone (set with it, under mu)
	drained     chan struct{}
	drainedOnce sync.Once

	// abandon is cancelled when the drain deadline passes: every call
	// still running has its context cancelled (cause errAbandoned) and a
	// call that fails from then on is answered SERVER_ERROR "shut down".
	abandon    context.Context
	abandonAll context.CancelCauseFunc
	abandoning atomic.Bool               // set just before abandonAll
	why        atomic.Pointer[string]    // why the calls still running were abandoned (abandonedWhy); nil: not yet
	cause      atomic.Pointer[spi.Error] // their contexts' cause, saying why (abandonCause); nil: not yet
	closed     atomic.Bool               // shutdown has closed the listener and channels: the node's references drop its providers (Node.holds)

	// exporting counts the Exports between serverFor and their end, and
	// exported says whether one of them succeeded; both on the node's mu.
	// A failed Export that leaves neither, and no service, closes the
	// server (Node.releaseServer).
	exporting int
	exported  bool

	// unrun counts the requests Serve did not run because abandoning was
	// set (read before the go-away, still queued for a worker): shutdown
	// counted them in flight at the go-away and takes them back out of
	// its abandoned count.
	unrun atomic.Int64

	// abandonedMu guards abandoned: the calls answered SERVER_ERROR "shut
	// down" once abandoning, counted per method and consumer ("demo.Echo.Sleep
	// from 127.0.0.1:50212"), in the order first seen, at most
	// maxAbandonedNamed of them (AbandonedError.Which).
	abandonedMu sync.Mutex
	abandoned   []AbandonedCalls
}

// maxAbandonedNamed bounds the methods and consumers a server names
// among its abandoned calls (AbandonedError.Which).
const maxAbandonedNamed = 8

// noteAbandoned counts an abandoned call of service.method from the
// consumer at remote ("" unknown): one more of an entry already named,
// else a new entry while fewer than maxAbandonedNamed are.
func (s *server) noteAbandoned(service, method, remote string) {
	name := service + "." + method
	if remote != "" {
		name += " from " + remote
	}
	s.abandonedMu.Lock()
	defer s.abandonedMu.Unlock()
	s.abandoned = addAbandoned(s.abandoned, AbandonedCalls{Call: name, Count: 1}, maxAbandonedNamed)
}

// addAbandoned adds c to which: its count to the entry of the same Call,
// else c as a new last entry while which has fewer than limit entries
// (limit <= 0: no bound).
func addAbandoned(which []AbandonedCalls, c AbandonedCalls, limit int) []AbandonedCalls {
	for i := range which {
		if which[i].Call == c.Call {
			which[i].Count += c.Count
			return which
		}
	}
	if limit > 0 && len(which) >= limit {
		return which
	}
	return append(which, c)
}

// abandonedNames returns the calls noteAbandoned counted.
func (s *server) abandonedNames() []AbandonedCalls {
	s.abandonedMu.Lock()
	defer s.abandonedMu.Unlock()
	return slices.Clone(s.abandoned)
}

// methodEnded is how a provider call abandoned with err ended: "the
// method returned: " and plainCause(err), or plainCause(err) alone when
// err's chain says the method had not returned (an error with a
// MethodUnfinished method: a service plugin's call the host cancelled,
// sdk/pluginrpc).
func methodEnded(err error) string {
	var u interface{ MethodUnfinished() bool }
	if errors.As(err, &u) && u.MethodUnfinished() {
		return plainCause(err)
	}
	return "the method returned: " + plainCause(err)
}

// plainCause returns err's text without a status name: an *spi.Error's
// message ("context canceled" for a method that returned its cancelled
// context's error), else err.Error(); for a message that already has a
// status of its own (SERVER_ERROR "shut down") not to name a second one.
func plainCause(err error) string {
	var se *spi.Error
	if errors.As(err, &se) && se.Message != "" {
		return strings.TrimPrefix(se.Message, se.Status.String()+": ")
	}
	return err.Error()
}

// serverFor returns the server for pu's transport and address, listening
// on first use, counted in its exporting until the caller's
// releaseServer.
func (n *Node) serverFor(ctx context.Context, pu spi.URL) (*server, error) {
	trb, _, err := n.cat.Transport.Select(pu, "")
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	addr := pu.Address()
	key := trb.Name() + "|" + addr
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errClosed
	}
	if err := CheckServerKeys(pu); err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	dispatcher, err := Dispatcher(pu)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	if s := n.servers[key]; s != nil {
		if err := sameServerKeys(s, pu); err != nil {
			return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
		}
		s.exporting++
		return s, nil
	}
	if pu.Port() != 0 {
		for k, s := range n.servers {
			if other, a, _ := strings.Cut(k, "|"); a == addr && other != trb.Name() {
				return nil, fmt.Errorf("kernel: export %s: %s already serves transport %s (%s, exported first): one transport per address; export on another port, or with transport=%s",
					pu.ServiceKey(), addr, other, s.first.ServiceKey(), other)
			}
		}
	}
	tr, err := extension.Build(extension.PointTransport, trb.Name(), func() (spi.Transport, error) { return trb.Build(pu) })
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	n.useLogger(tr) // its listener logs accept failures (out of file descriptors)
	payload, err := pu.Size("payload", 0)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	hb, _, err := buildHeartbeat(n.cat, pu)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	// Ping-flood guard: heartbeat.min.ping.interval (default 1s, or the
	// provider's own heartbeat interval when shorter: consumers that take
	// it from the registry ping that often; 0 turns it off).
	defMinPing := exchange.DefaultMinPingInterval
	if iv, ok := exchange.AdvertisedInterval(pu); ok && iv < defMinPing {
		defMinPing = iv
	}
	minPing, err := pu.Duration(keyMinPingInterval, defMinPing)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	hello := pu
	if minPing == 0 {
		minPing = -1
	} else {
		// advertised, so that a consumer pinging faster is told (exchange)
		hello = pu.With(keyMinPingInterval, minPing.String())
	}
	// Per-connection cap: connection.concurrency (default 16384; 0 or negative = unlimited).
	maxConc, err := pu.Int(keyConnectionConcurrency, exchange.DefaultMaxConcurrent)
	if err == nil && maxConc > math.MaxInt32 {
		err = &spi.ParamError{Key: keyConnectionConcurrency, Value: pu.ParamOr(keyConnectionConcurrency, ""), Want: "an integer up to 2147483647 (0 or negative: unlimited)"}
	}
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	if maxConc <= 0 {
		maxConc = -1
	}
	healthOn, err := healthEnabled(pu)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	// Server-wide bound on unsent answers: unsent.limit (absent: the
	// exchange's default, 256 MiB; 0: off).
	unsentLimit, err := pu.Size(keyUnsentLimit, 0)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	if _, set := pu.Param(keyUnsentLimit); set && unsentLimit == 0 {
		unsentLimit = -1
	}
	// Connection limit: accepts (default: the open-file limit, read now,
	// minus a reserve) and accepts.per.ip (default: none).
	accepts, acceptsWarn, fdsOpen, err := listenAccepts(pu)
	if err != nil {
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
	}
	// Listen takes no ctx (spi.Transport): it runs without the node's
	// lock, bounded by ctx (listen.go), so a transport whose Listen never
	// returns fails this Export at ctx's end and blocks nothing else.
	n.mu.Unlock()
	l, err := n.listen(ctx, tr, trb.Name(), pu.ServiceKey(), addr)
	n.mu.Lock()
	if err != nil {
		return nil, err
	}
	if n.closed {
		l.Close()
		return nil, errClosed
	}
	if s := n.servers[key]; s != nil {
		// exported on the same address meanwhile (port 0: another port)
		l.Close()
		if err := sameServerKeys(s, pu); err != nil {
			return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), err)
		}
		s.exporting++
		return s, nil
	}
	started, _ := pu.Int("timestamp", 0) // providerURL set it; the first service's is the server's start
	s := &server{log: n.logger, transport: trb.Name(), first: pu, done: make(chan struct{}), drained: make(chan struct{}), services: map[string]service{}}
	s.host, s.port = advertised(l.Addr(), pu.Host())
	if s.port == 0 {
		l.Close()
		return nil, fmt.Errorf("kernel: export %s: %w", pu.ServiceKey(), noPortError(trb.Name(), l.Addr()))
	}
	s.l = l
	s.health = n.healthFor(s, healthOn)
	s.abandon, s.abandonAll = context.WithCancelCause(context.Background())
	warnNameAddresses(n.logger, net.DefaultResolver.LookupIPAddr, pu.Host(), l.Addr())
	s.srv = exchange.NewServer(l, exchange.Options{
		Side: spi.Provider, Payload: payload, Codec: n.cat.CodecByID, Handler: s, Heartbeat: hb, Logger: n.base,
		Hello: exchange.HeartbeatHello(hello), WarnOnce: &n.pool.warnOnce, MinPingInterval: minPing, MaxConcurrent: int(maxConc),
		Direct: dispatcher == "direct", Adaptive: dispatcher == "adaptive", UnsentLimit: unsentLimit,
		SmallAnswer: s.smallAnswer, ForeignOpening: n.foreignOpening(trb.Name()),
		Connections: counters.ProviderConnections.For(trb.Name()),
		Started:     started, // told to each consumer in its hello's answer: the warm-up of a process restarted on an address its old entry still holds
	})
	s.srv.LimitConnections(accepts)
	if acceptsWarn != "" {
		n.logger.Warn(acceptsWarn, "addr", l.Addr().String())
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(); err != nil {
			n.logger.Error("server stopped", "addr", l.Addr().String(), "err", err)
		}
	}()
	n.servers[key] = s
	n.servers[trb.Name()+"|"+net.JoinHostPort(s.host, strconv.Itoa(s.port))] = s
	s.exporting++
	n.logger.Info("listening", "transport", trb.Name(), "addr", l.Addr().String(), keyAccepts, accepts.Max, "fds_open", fdsOpen)
	return s, nil
}

// advertised returns the host and port consumers should dial: the bound
// port, and the requested host when it is an IP address, the bound one
// for a name (localhost publishes 127.0.0.1, a name with several
// addresses the one listened on) — or, when
// the listener is bound to every interface (no host, 0.0.0.0, ::), the
// machine's first non-loopback address (localIP), as Dubbo publishes
// NetUtils.getLocalHost: a provider registered as 127.0.0.1 could not be
// reached from another machine. Listen on an address to publish that
// one; the URL key advertise publishes another (readAdvertise).
func advertised(a net.Addr, requested string) (string, int) {
	host, port := requested, 0
	if ta, ok := a.(*net.TCPAddr); ok {
		port = ta.Port
		if host == "" || net.ParseIP(host) == nil {
			host = ta.IP.String()
		}
	} else if h, p, err := net.SplitHostPort(a.String()); err == nil {
		port, _ = strconv.Atoi(p)
		if host == "" || net.ParseIP(host) == nil {
			host = h
		}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = localIP()
	}
	return host, port
}

// localIP returns the first IPv4 address of an interface that is up and
// not loopback, skipping link-local addresses; else the first such IPv6
// address; else 127.0.0.1 (a machine with loopback only).
func localIP() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	var v6 string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ip4 := ipn.IP.To4(); ip4 != nil {
				return ip4.String()
			}
			if v6 == "" {
				v6 = ipn.IP.String()
			}
		}
	}
	if v6 != "" {
		return v6
	}
	return "127.0.0.1"
}

// releaseServer ends an Export's use of s (serverFor's count): ok says
// whether the Export succeeded. When it failed, and s has no service, no
// Export that succeeded ever used it and no other Export is under way on
// it (the listener this or another failed Export opened, with nothing
// exported on it), the server is taken from the node and closed: its
// listener and any connection (a health probe's) close, and the address
// can be listened on again. It returns what the Export's error should
// add then ("the listener it opened on 127.0.0.1:20880 is closed: nothing
// is exported on it"), else "". A server that serves other services, or
// did, stays until Shutdown (as after Unexport).
func (n *Node) releaseServer(s *server, ok bool) string {
	n.mu.Lock()
	s.exporting--
	if ok {
		s.exported = true
	}
	s.mu.RLock()
	empty := len(s.services) == 0
	s.mu.RUnlock()
	drop := !ok && !n.closed && s.exporting == 0 && !s.exported && empty
	if drop {
		for k, x := range n.servers {
			if x == s {
				delete(n.servers, k)
			}
		}
	}
	n.mu.Unlock()
	if !drop {
		return ""
	}
	addr := net.JoinHostPort(s.host, strconv.Itoa(s.port))
	s.closed.Store(true)
	_ = s.srv.Close() // the listener (its Close on a goroutine of its own) and every channel
	s.abandonAll(nil)
	// Bounded: a transport whose listener Close or Accept never returns
	// is left running (logged), and the Export returns its error anyway.
	wait := time.NewTimer(unusedCloseWait)
	defer wait.Stop()
	for _, c := range []<-chan struct{}{s.l.closed, s.done} {
		select {
		case <-c:
		case <-wait.C:
			n.logger.Warn("the listener of a failed export, with nothing exported on it, did not close; stopped waiting for it (it may still finish later)",
				"transport", s.transport, "addr", addr, "waited", unusedCloseWait)
			return fmt.Sprintf("the listener it opened on %s, with nothing exported on it, is closing (its transport %q has not closed it within %v)", addr, s.transport, unusedCloseWait)
		}
	}
	n.logger.Info("closed the listener of a failed export: nothing is exported on it", "transport", s.transport, "addr", addr)
	return fmt.Sprintf("the listener it opened on %s is closed: nothing is exported on it", addr)
}

// unusedCloseWait bounds how long a failed Export waits for the
// listener it closes (releaseServer).
const unusedCloseWait = time.Second

func (s *server) add(key string, svc service) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.services[key]; dup {
		return fmt.Errorf("kernel: export %s: already exported on %s:%d", key, s.host, s.port)
	}
	s.services[key] = svc
	return nil
}

func (s *server) remove(key string) {
	s.mu.Lock()
	delete(s.services, key)
	s.mu.Unlock()
}

// interfaceOf returns the interface of a service key: key without its
// "group/" and ":version" (spi.ServiceKey's form).
func interfaceOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	if i := strings.IndexByte(key, ':'); i >= 0 {
		key = key[:i]
	}
	return key
}

// notExported is the SERVICE_NOT_FOUND of a call to method of key, which
// s does not serve (notExportedError, with exportedHere's keys and the
// service and method swappedName finds among them).
func (s *server) notExported(key, method string) error {
	same, all := s.exportedHere(key)
	meant := swappedName(key, method, all, s.hasMethod)
	return notExportedError(key, fmt.Sprintf("%s:%d", s.host, s.port), same, all, meant)
}

// hasMethod reports whether the service exported on s under key has a
// method named method: its method table's, or a generic invoker's
// allowed methods (false when it allows any: nothing says it has it).
func (s *server) hasMethod(key, method string) bool {
	s.mu.RLock()
	svc := s.services[key]
	s.mu.RUnlock()
	es, ok := svc.(*exportedService)
	switch {
	case !ok:
		return false
	case es.table != nil:
		return es.table.methods[method] != nil
	}
	return slices.Contains(es.methods, method)
}

// exportedHere returns, for a key s does not serve, the keys for
// exportedHint: sorted, up to 5 service keys exported on s with key's
// interface but another group or version (the hint of a call that named
// no group or version, or others), and every key exported on s.
func (s *server) exportedHere(key string) (same, all []string) {
	iface := interfaceOf(key)
	s.mu.RLock()
	for k := range s.services {
		all = append(all, k)
		if k != key && interfaceOf(k) == iface {
			same = append(same, k)
		}
	}
	s.mu.RUnlock()
	slices.Sort(same)
	slices.Sort(all)
	return same[:min(len(same), 5)], all
}

// smallAnswer is the exchange's Options.SmallAnswer: whether method of
// the service exported on s under key service answers small whatever it
// is given (method.small: its result of a fixed size, or an error only).
// False for a generic invoker's service (ExportInvoker, plugin-hosted),
// the health service, and keys or methods not exported here. A provider
// filter that replaces such a method's value with a large one is not
// foreseen: its answer then counts once made, as any other.
func (s *server) smallAnswer(service, method string) bool {
	s.mu.RLock()
	svc := s.services[service]
	s.mu.RUnlock()
	es, ok := svc.(*exportedService)
	if !ok || es.table == nil {
		return false
	}
	m := es.table.methods[method]
	return m != nil && m.small
}

// Serve dispatches a request to its service (exchange.Handler). A
// request that reaches it once the server abandons its calls (read
// before the go-away, queued for a worker meanwhile) is not run: it is
// answered as the exchange answers one read after the go-away
// (exchange.NotRunAnswer: its consumer may retry it elsewhere) and
// counted in unrun, not as abandoned.
func (s *server) Serve(ctx context.Context, req *exchange.Request) spi.Result {
	if s.abandoning.Load() {
		s.unrun.Add(1)
		return spi.Result{Err: exchange.NotRunAnswer()}
	}
	s.mu.RLock()
	svc := s.services[req.Service]
	counted := !s.draining
	if counted {
		s.before.Add(1)
	}
	s.mu.RUnlock()
	if counted {
		defer s.beforeDone()
	}
	if svc == nil {
		if svc = s.health; svc == nil || req.Service != HealthService {
			return rejected(s.notExported(req.Service, req.Method))
		}
	}
	// A call still running when the drain deadline passes is abandoned:
	// its context is cancelled and its consumer told why.
	pc := providerCalls.Get().(*providerCall)
	pc.ctx = &callCtx{Context: ctx, s: s}
	defer func() { // also when the method ends its goroutine (runtime.Goexit)
		pc.ctx.release()
		*pc = providerCall{}
		providerCalls.Put(pc)
	}()
	res := svc.serve(pc, req)
	if res.Err != nil {
		s.logMethodPanic(req, res.Err)
	}
	res.Attachments = pc.ctx.responseAttachments(res.Attachments) // the method's spi.SetResponseAttachments
	if res.Err != nil && s.abandoning.Load() {
		s.noteAbandoned(req.Service, req.Method, req.Remote)
		res = spi.Result{Err: &spi.Error{Status: spi.StatusServerError,
			Message: fmt.Sprintf("provider %s:%d shut down: %s while %s.%s was running; the call was abandoned (%s)",
				s.host, s.port, s.abandonedWhy(), req.Service, req.Method, methodEnded(res.Err)),
			Cause: errors.Join(spi.ErrProviderShutdown, res.Err)}}
	}
	return res
}

// callCtx is the context a provider call runs with: the exchange's
// request context, also cancelled (cause errAbandoned) when the server
// abandons its calls at the drain deadline. Like the exchange's own request
// context it is lazy: the link to the server is only made when the call
// first asks for Done, so a call that never waits costs one small
// allocation (this struct: the method may keep it, so it is not pooled
// with providerCall) and no registration on the server's shared context.
type callCtx struct {
	context.Context // the exchange's request context
	s               *server

	// served says the call reached its filter chain; inv is its
	// invocation until the call returns (under mu: the invocation is
	// pooled), att its attachments map as the call left it; remote, when
	// that map is pooled (only "remote" came), the consumer's address, and
	// pooled that map's state (attPooled...): Value answers
	// spi.IncomingAttachments from them (callCtx.incoming).
	served bool
	// reached is, when the service has filters, the furthest place in
	// its chain the call got to: n for its nth filter (filterInvoker.pos),
	// one more than the filters for the service's invoker (ranInvoker);
	// atomic: a filter may call next on another goroutine
	reached atomic.Int32
	inv     *spi.Invocation
	att     map[string]string
	remote  string
	pooled  atomic.Int32

	// resp holds the method's spi.SetResponseAttachments until the answer
	// takes them (respSent after; responseAttachments)
	resp atomic.Pointer[respAttachments]

	mu     sync.Mutex
	linked context.Context // made by the first Done
	cancel context.CancelCauseFunc
	stop   func() bool
}

// Done returns a channel closed when the request context ends or the call
// is abandoned.
func (c *callCtx) Done() <-chan struct{} {
	return c.link().Done()
}

// link returns the linked context, making it on first use; once the server
// abandons its calls it is cancelled (cause errAbandoned) before link
// returns, not only by the AfterFunc's goroutine.
func (c *callCtx) link() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.linked == nil {
		c.linked, c.cancel = context.WithCancelCause(c.Context)
		c.stop = context.AfterFunc(c.s.abandon, func() { c.cancel(c.s.abandonCause()) })
	}
	if c.s.abandoning.Load() {
		c.cancel(c.s.abandonCause()) // a no-op when already cancelled: the first cause stays
	}
	return c.linked
}

// Value is the request context's, except once the call is abandoned: then
// it is the linked context's, so that context.Cause(ctx) (which asks Value
// for the cancelling context) returns errAbandoned.
func (c *callCtx) Value(key any) any {
	switch key.(type) {
	case spi.IncomingAttachmentsKey:
		if m := c.incoming(); m != nil {
			return m
		}
	case servedKey:
		return c.served
	case spi.ResponseAttachmentsKey, ranKey:
		return c
	}
	if c.s.abandoning.Load() {
		return c.link().Value(key)
	}
	return c.Context.Value(key)
}

// incoming returns the call's attachments for spi.IncomingAttachments,
// without an allocation per call: the invocation's own map (decoded for
// this call, or pooled and then kept from the pool once asked for), or,
// when asked after the call returned and its pooled map went back to the
// pool, a new map holding only "remote" (the method may keep its
// context); nil when there are none.
func (c *callCtx) incoming() map[string]string {
	if !c.served {
		return nil
	}
	c.mu.Lock()
	att := c.att // the call returned: its invocation went back to the pool
	if c.inv != nil {
		att = c.inv.Attachments // a filter may have replaced the map (a plugin's does)
	}
	c.mu.Unlock()
	switch c.pooled.Load() {
	case attPooled, attAsked:
		if c.pooled.CompareAndSwap(attPooled, attAsked) || c.pooled.Load() == attAsked {
			return att
		}
		return map[string]string{spi.AttachmentRemote: c.remote}
	case attRecycled:
		return map[string]string{spi.AttachmentRemote: c.remote}
	}
	return att
}

// The states of a call's pooled attachments map (callCtx.pooled); 0: not
// pooled.
const (
	attPooled   = 1 + iota // in use by the call
	attAsked               // handed to the method: never back to the pool
	attRecycled            // back in the pool after the call
)

// servedKey asks a context whether it answers spi.IncomingAttachments
// itself (a provider call's callCtx), so that method.incoming need not
// wrap it.
type servedKey struct{}

// Err is context.Canceled once the call is abandoned, else the request
// context's error.
func (c *callCtx) Err() error {
	c.mu.Lock()
	l := c.linked
	c.mu.Unlock()
	if l != nil {
		return l.Err()
	}
	if c.s.abandoning.Load() {
		return context.Canceled
	}
	return c.Context.Err()
}

// release undoes the link made by Done, if any, and keeps the
// invocation's attachments map, as the call left it, for a method that
// kept its context (the invocation goes back to the pool).
func (c *callCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inv != nil {
		c.att, c.inv = c.inv.Attachments, nil
	}
	if c.linked != nil {
		c.stop()
		c.cancel(nil)
	}
}

// abandonedWhy says why the calls still running were abandoned, for their
// consumers: the shutdown's timeout passed, it was told to stop at once
// (its context cancelled: serve's second Ctrl-C), or the context given
// to Shutdown reached its own deadline before the timeout (tester69: the
// consumers were told "shutdown timeout passed", which raising
// shutdown.timeout would not have helped).
func (s *server) abandonedWhy() string {
	if why := s.why.Load(); why != nil {
		return *why
	}
	return "its shutdown timeout passed"
}

// abandonCause is the cancellation cause of the calls abandoned by
// shutdown: errAbandoned's status, saying why (abandonedWhy).
func (s *server) abandonCause() error {
	if e := s.cause.Load(); e != nil {
		return e
	}
	return errAbandoned
}

// abandonReason is abandonedWhy's phrase for a drain context ctx that
// has ended: Node.Shutdown's, whose cause is errDrainTimeout when
// shutdown.timeout passed first.
func abandonReason(ctx context.Context) string {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return "it was told to stop at once"
	case context.Cause(ctx) == errDrainTimeout:
		return "its shutdown timeout passed"
	default:
		return "the deadline of its Shutdown's context passed before its shutdown timeout"
	}
}

// shutdown stops accepting, drains in-flight calls until ctx ends, closes
// the channels and waits for the accept loop. It returns how many calls it
// abandoned.
//
// It closes the listener first (exchange's StopAccepting): from then on a
// new connection is refused, while the consumers already connected still
// have their calls served until the go-away.
//
// Before the exchange's Shutdown it waits for the requests that were in
// flight when shutdown began, plus a short flush grace, with the channels
// still open: the exchange counts a request done once its answer is queued,
// and closing the channel at that moment could drop an answer not yet
// written. When ctx ends first, the calls still running are abandoned:
// their contexts are cancelled, and for abandonGrace they may still return
// and be answered (SERVER_ERROR "shut down") before the channels close.
// It does not wait for an abandoned call that ignores its context: the
// channels close, and the call's goroutine ends when it returns.
//
// When the drain ends in time it sends each consumer the go-away at once
// (exchange's GoAway): a request read from then on is not run, and its
// consumer may retry it, so that a consumer that keeps sending (one whose
// only provider this is) cannot hold the exchange's Shutdown, which waits
// for a moment with no request in flight, open until ctx ends. That wait
// is then for the requests read during the drain, before the go-away.
// When ctx ends during it (one of them runs past the timeout), the
// requests the exchange then has in flight are
// abandoned the same way, counted and named (abandonLate).
func (s *server) shutdown(ctx context.Context) (_ int, serr error) {
	dctx := ctx // the drain's: ctx is replaced by the abandoning grace's below
	s.srv.StopAccepting()
	addr := net.JoinHostPort(s.host, strconv.Itoa(s.port))
	s.log.Info("listener closed; draining the calls in flight",
		"addr", addr, "in_flight", s.srv.InFlight(), "connections", s.srv.Connections())
	began := time.Now()
	s.mu.Lock()
	s.draining = true
	s.drainBegun.Store(true)
	waited := s.before.Load() // the calls the drain waits for (no more are counted: adds hold mu)
	s.mu.Unlock()
	if s.before.Load() == 0 {
		s.drainedOnce.Do(func() { close(s.drained) })
	}
	drained := s.drained
	abandoned := 0
	inTime := waitDrained(ctx, drained)
	if inTime {
		// The calls in flight as the drain began are done: the go-away
		// goes out now, so a consumer that kept sending through the drain
		// (its only provider: the read-only event did not turn it away)
		// is told at once, its later requests not run (retried), rather
		// than holding the exchange's drain open until ctx ends and
		// having them abandoned. The requests read meanwhile (later) still
		// run to their end. One line for the drain, none per call.
		attrs := []any{"addr", addr, "calls", waited, "took", time.Since(began).Round(time.Millisecond)}
		if later := s.srv.GoAway(); later > 0 {
			attrs = append(attrs, "later_calls", later) // read during the drain, still running
		}
		s.log.Info("drained the calls in flight", attrs...)
	}
	if !inTime {
		// The go-away goes out first, before the calls still running
		// are abandoned: a request read from now on is not run
		// (answered as not run, behind the go-away), and each abandoned
		// call's SERVER_ERROR reaches its consumer after the go-away,
		// which tells it the provider is shutting down
		// (spi.ErrProviderShutdown), so failover does not send the
		// retry straight back here. Abandoning first, the go-away came
		// only after abandonGrace (the exchange's Shutdown): an
		// idempotent call's retries came back meanwhile, started the
		// method again at once, and were abandoned in turn (tester
		// nu78: one call, three runs, each answered "abandoned").
		abandoned = s.srv.GoAway()
		s.abandonCalls(ctx)
		gctx, cancel := context.WithTimeout(context.Background(), abandonGrace)
		defer cancel()
		waitDrained(gctx, drained)
		ctx = gctx
	}
	// The exchange's Shutdown closes every channel; past ctx (plus its
	// short grace) it leaves behind the handlers that ignore their
	// context, and so does this: an abandoned call still running keeps
	// its own goroutine until it returns, and nothing waits for it.
	xctx, late := ctx, func() (int, bool) { return 0, false }
	if inTime {
		xctx, late = s.abandonLate(ctx)
	}
	err := s.srv.Shutdown(xctx)
	if n, ended := late(); ended {
		// ctx ended during the exchange's Shutdown: its calls then in
		// flight are this shutdown's abandoned ones, and xctx's
		// cancellation is ctx's end
		abandoned = n
		if errors.Is(err, context.Canceled) {
			err = ctx.Err()
		}
	}
	// A connection left closing is named by the extension call it waits
	// on (a session's Close, a heartbeat's stop), which
	// explains the exchange's ctx error.
	if stuck := s.stuckErrors(dctx, time.Since(began)); stuck != nil {
		err = nil
		defer func() { serr = errors.Join(serr, stuck) }()
	}
	// The transport's listener Close and Accept, bounded by ctx: one that
	// never returns is left running, named in the error (listen.go).
	lerr := s.awaitListener(ctx)
	if inTime {
		<-drained
	}
	s.abandonAll(nil) // releases the context
	// The requests in flight at the go-away that were still queued for a
	// worker then did not run: those that reached Serve once abandoning
	// (unrun), and those no worker took before the channels closed (the
	// exchange's Shutdown answered them as not run). Neither is an
	// abandoned call.
	abandoned = max(abandoned-int(s.unrun.Load())-s.srv.NotStarted(), 0)
	if err != nil && abandoned == 0 {
		return 0, errors.Join(fmt.Errorf("kernel: server %s:%d: %w", s.host, s.port, err), lerr)
	}
	return abandoned, lerr
}

// abandonLate returns the context for the exchange's Shutdown once the
// kernel's drain ended in time. It ends when ctx does, but only after the
// calls then still in flight (read after the drain began: a consumer that
// kept sending) are abandoned as those of a drain past its deadline are
// (abandoning; their contexts cancelled, cause errAbandoned), so that
// when the exchange abandons them too (cancelling their channels'
// contexts) they are counted, named (noteAbandoned) and answered as the
// kernel's own. done, called once the exchange's Shutdown returned,
// releases the context and reports whether ctx had ended, and then how
// many requests the exchange had in flight at that moment.
func (s *server) abandonLate(ctx context.Context) (xctx context.Context, done func() (abandoned int, ended bool)) {
	xctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	late := make(chan int, 1)
	stop := context.AfterFunc(ctx, func() {
		n := s.srv.InFlight()
		s.abandonCalls(ctx)
		cancel()
		late <- n
	})
	return xctx, func() (int, bool) {
		if stop() {
			cancel()
			return 0, false
		}
		return <-late, true // the AfterFunc ran, or is running: wait for it
	}
}

// abandonCalls abandons the calls still running once ctx ended: a call
// that fails from then on is answered SERVER_ERROR "shut down" and
// named (serve), and every call's context is cancelled (cause
// errAbandoned).
func (s *server) abandonCalls(ctx context.Context) {
	why := abandonReason(ctx)
	s.why.Store(&why)
	s.cause.Store(&spi.Error{Status: spi.StatusServerError, Message: "kernel: provider shutting down: " + why, Cause: spi.ErrProviderShutdown})
	s.abandoning.Store(true)
	s.abandonAll(s.abandonCause())
}

// beforeDone ends the count of a request that started before draining:
// the last one to end once shutdown began closes drained.
func (s *server) beforeDone() {
	if s.before.Add(-1) == 0 && s.drainBegun.Load() {
		s.drainedOnce.Do(func() { close(s.drained) })
	}
}

// waitDrained waits for drained and then flushGrace, or for ctx; it
// reports whether drained was reached.
func waitDrained(ctx context.Context, drained <-chan struct{}) bool {
	select {
	case <-drained:
		t := time.NewTimer(flushGrace)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		return true
	case <-ctx.Done():
		return false
	}
}

// providerGroupVersion refuses a provider URL whose group or version is a
// consumer's pattern ("*", Dubbo's any; "a,b", several): a provider is in
// one group and one version, which its service key names.
func providerGroupVersion(u spi.URL) error {
	for _, k := range []string{spi.KeyGroup, spi.KeyVersion} {
		if v, _ := u.Param(k); strings.ContainsAny(v, "*,") {
			return fmt.Errorf("URL key %s=%q: a provider is in one %s (\"*\" and lists such as \"a,b\" are for references)", k, v, k)
		}
	}
	return nil
}

// foreignOpening returns the exchange's Options.ForeignOpening for a
// listener of transport own: when another transport of the node's
// catalogs (the first by name) recognizes a connection's first bytes as
// its consumers' opening (spi.OpeningRecognizer), "the consumer speaks
// transport=NAME, this listener transport=OWN: the consumer's URL key
// transport must be OWN"; else "".
func (n *Node) foreignOpening(own string) func(first []byte) string {
	return func(first []byte) string {
		for _, name := range n.cat.Transport.Names() {
			if name == own {
				continue
			}
			b, err := n.cat.Transport.Get(name)
			if err != nil {
				continue
			}
			if r, ok := b.(spi.OpeningRecognizer); ok && r.RecognizesOpening(first) {
				return fmt.Sprintf("the consumer speaks transport=%s, this listener transport=%s: the consumer's URL key transport must be %s (airnode call, bench, health: -p transport=%s)", name, own, own, own)
			}
		}
		return ""
	}
}

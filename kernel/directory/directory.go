package directory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/spi"
)

// KeyProtocol is the consumer URL key naming the provider protocol (URL
// scheme) the reference accepts; default DefaultProtocol.
const KeyProtocol = "protocol"

// DefaultProtocol is the provider scheme accepted by default.
const DefaultProtocol = "airnode"

// NewInvoker makes the invoker of one provider from its merged URL. It is
// called from the registry's notify goroutine, so it must not block for long
// (connect in the background).
type NewInvoker func(provider spi.URL) (spi.Invoker, error)

// Directory is the live list of provider invokers of one reference. It
// implements spi.Directory; safe for concurrent use.
type Directory struct {
	consumer   spi.URL
	reg        spi.Registry
	desc       string
	newInvoker NewInvoker
	log        *slog.Logger
	protocol   string

	snap atomic.Pointer[snapshot]

	groups, versions valueSet // what the consumer's group and version accept
	setErr           error    // a malformed group or version: Start fails with it

	// With several service keys (Multi): one subscription per key.
	pushMu     sync.Mutex                  // serialises keyUpdate (and so update) across keys
	lists      map[string][]spi.URL        // service key -> its last list; pushMu
	waiting    map[string]bool             // keys of Start without a first list yet; pushMu
	subs       map[string]spi.Subscription // service key -> subscription; mu
	rescanQuit chan struct{}               // closes to stop rescan; mu
	rescanDone chan struct{}               // closed when rescan has ended; mu

	applyMu  sync.Mutex         // serialises update and Refresh (a push and a re-apply of the last one)
	last     []spi.URL          // the last pushed list; applyMu
	hold     func(spi.URL) bool // Hold's; set before Start
	departed []string           // providers listed and then dropped by the pushes since the last non-empty one; applyMu
	holding  bool               // the last apply kept a provider because hold held it; applyMu
	seen     map[string]uint64  // provider URL -> when first seen (seq), for newest; applyMu
	seq      uint64             // counts provider URLs seen; applyMu
	prot     *protection        // empty protection and removal damping (protect.go)

	mu       sync.Mutex        // serialises update, Start and Close
	members  map[string]member // raw provider URL string -> member
	sub      spi.Subscription
	ignored  map[string]string // provider URL -> why the reference ignores it (another transport); warned once each
	first    chan struct{}
	gotFirst bool
	closed   bool
	changes  []func()

	near nearMiss // NearMiss's last answer
}

type member struct {
	provider spi.URL // as pushed by the registry
	invoker  spi.Invoker
}

// snapshot is an immutable view for List.
type snapshot struct {
	all       []spi.Invoker
	providers []spi.URL
	ignored   []string     // why providers of the last push were left out (another transport, group or version)
	avail     availability // List's cache of the available invokers of all (available.go)
	// methods is the union of the providers' "methods" lists, sorted,
	// when every provider has one; nil when some provider lists none
	// (its methods are unknown) or there is no provider.
	methods []string
}

// listedMethods returns the sorted union of providers' "methods" lists,
// or nil when providers is empty or one of them has no "methods".
func listedMethods(providers []spi.URL) []string {
	var out []string
	for _, p := range providers {
		m := p.Methods()
		if len(m) == 0 {
			return nil
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Unlisted reports whether no provider can serve method because every
// provider has a "methods" list (the method names its URL publishes, as
// a kernel provider's does) and none lists method; listed is then the
// union of their lists, sorted. With no provider, or one without a
// "methods" list, it reports false: nothing is known. Dubbo routes a
// call by method in the same spirit (RegistryDirectory's per-method
// invoker lists): a consumer fails such a call at once rather than ask
// each provider. Cheap: one binary search in the list the last push
// computed.
func (d *Directory) Unlisted(method string) (listed []string, unlisted bool) {
	m := d.snap.Load().methods
	if m == nil {
		return nil, false
	}
	if _, found := slices.BinarySearch(m, method); found {
		return nil, false
	}
	return m, true
}

// New returns a Directory for the consumer reference URL, fed by reg (which
// the Directory does not own or close). registryDesc names the registry in
// messages ("zookeeper://127.0.0.1:2181"). newInvoker builds a provider
// invoker from a merged URL. logger may be nil (slog.Default()). Pure: call
// Start to subscribe.
func New(consumer spi.URL, reg spi.Registry, registryDesc string, newInvoker NewInvoker, logger *slog.Logger) *Directory {
	if logger == nil {
		logger = slog.Default()
	}
	d := &Directory{
		consumer:   consumer,
		reg:        reg,
		desc:       registryDesc,
		newInvoker: newInvoker,
		log:        logger.With("component", "directory", "service", consumer.ServiceKey(), "registry", registryDesc),
		protocol:   consumer.ParamOr(KeyProtocol, DefaultProtocol),
		members:    map[string]member{},
		first:      make(chan struct{}),
	}
	d.groups, d.setErr = parseSet(spi.KeyGroup, consumer.ParamOr(spi.KeyGroup, ""))
	if d.setErr == nil {
		d.versions, d.setErr = parseSet(spi.KeyVersion, consumer.ParamOr(spi.KeyVersion, ""))
	}
	if d.setErr == nil {
		d.prot, d.setErr = parseProtection(consumer) // protect.go
	}
	if d.prot == nil {
		d.prot = &protection{} // Start fails with setErr
	}
	d.snap.Store(&snapshot{})
	return d
}

// Start subscribes to the registry and returns after the first provider
// list has been applied (possibly empty). With a group or version list
// or "*" (Multi) it subscribes to each service key that fits and returns
// after each has pushed its first list; with "*" it starts the goroutine
// that looks for new keys every RescanInterval, which Close stops and
// waits for. A malformed group or version fails (CheckGroupVersion). If
// ctx ends first, Start stops the subscriptions and returns an error
// wrapping ctx.Err(); a Directory whose Start failed may be started
// again. Start after Close fails.
func (d *Directory) Start(ctx context.Context) error {
	if d.setErr != nil {
		return fmt.Errorf("directory %s: %w", d.consumer.ServiceKey(), d.setErr)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return fmt.Errorf("directory %s: closed", d.consumer.ServiceKey())
	}
	if d.sub != nil || d.subs != nil {
		d.mu.Unlock()
		return fmt.Errorf("directory %s: already started", d.consumer.ServiceKey())
	}
	d.mu.Unlock()
	if d.groups.Multi() || d.versions.Multi() {
		return d.startMulti(ctx)
	}
	sub, err := d.reg.Subscribe(ctx, d.consumer, d.update)
	if err != nil {
		return fmt.Errorf("directory %s: subscribe to %s: %w", d.consumer.ServiceKey(), d.desc, err)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		sub.Stop()
		return fmt.Errorf("directory %s: closed", d.consumer.ServiceKey())
	}
	d.sub = sub
	d.mu.Unlock()
	select {
	case <-d.first:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		s := d.sub
		d.sub = nil
		d.mu.Unlock()
		if s != nil {
			s.Stop()
		}
		return fmt.Errorf("directory %s: no provider list from %s yet: %w", d.consumer.ServiceKey(), d.desc, ctx.Err())
	}
}

// URL returns the consumer's reference URL.
func (d *Directory) URL() spi.URL { return d.consumer }

// Registry returns the registry description given to New.
func (d *Directory) Registry() string { return d.desc }

// List returns the available invokers. The slice is shared: callers must not
// modify it. Never blocks for long; allocates only when some invoker is
// unavailable. When every invoker is Watched, the list is built on the
// first call after an epoch moved (O(providers)) and served from the
// snapshot until the next move (available.go); else every invoker is
// asked on every call.
func (d *Directory) List(*spi.Invocation) []spi.Invoker {
	s := d.snap.Load()
	return s.avail.list(s.all)
}

// All returns every invoker, available or not (shared slice, do not modify).
func (d *Directory) All() []spi.Invoker { return d.snap.Load().all }

// Providers returns the accepted provider URLs as pushed by the registry
// (not merged), sorted, one per protocol, address and service key (the
// newest: see the package doc), then those still listed because Hold
// holds them.
func (d *Directory) Providers() []spi.URL { return d.snap.Load().providers }

// OnChange registers f, called (from the registry's notify goroutine) after
// every applied change of the provider list. Register before Start.
func (d *Directory) OnChange(f func()) {
	d.mu.Lock()
	d.changes = append(d.changes, f)
	d.mu.Unlock()
}

// accepts reports whether provider belongs to this reference.
func (d *Directory) accepts(p spi.URL) bool {
	if p.Scheme() != d.protocol {
		return false
	}
	if enabled, err := p.Bool("enabled", true); err == nil && !enabled {
		return false
	}
	return d.groups.Has(p.ParamOr(spi.KeyGroup, "")) && d.versions.Has(p.ParamOr(spi.KeyVersion, ""))
}

// otherGroupVersion returns why provider, of this reference's protocol
// and enabled, is left out for its group or version ("" when it is not):
// "127.0.0.1:N is in group g, version 1.0 (the reference asks for no
// group, no version)".
func (d *Directory) otherGroupVersion(p spi.URL) string {
	if p.Scheme() != d.protocol {
		return ""
	}
	if enabled, err := p.Bool("enabled", true); err == nil && !enabled {
		return ""
	}
	if d.groups.Has(p.ParamOr(spi.KeyGroup, "")) && d.versions.Has(p.ParamOr(spi.KeyVersion, "")) {
		return ""
	}
	return fmt.Sprintf("%s is in %s, %s (the reference asks for %s, %s)", p.Address(),
		named(p, spi.KeyGroup, "group"), named(p, spi.KeyVersion, "version"),
		named(d.consumer, spi.KeyGroup, "group"), named(d.consumer, spi.KeyVersion, "version"))
}

// named says u's value of key as "group g", "no group", "any group"
// (*) or "groups a,b".
func named(u spi.URL, key, what string) string {
	switch v := u.ParamOr(key, ""); {
	case v == "":
		return "no " + what
	case v == "*":
		return "any " + what
	case strings.Contains(v, ","):
		return what + "s " + v
	default:
		return what + " " + v
	}
}

// anyTaken reports whether the reference would take one of providers.
func (d *Directory) anyTaken(providers []spi.URL) bool {
	for _, p := range providers {
		if d.accepts(p) && d.unfit(p) == "" {
			return true
		}
	}
	return false
}

// elsewhereTimeout bounds elsewhere's look-ups in the registry (they run
// on its notify goroutine).
const elsewhereTimeout = time.Second

// elsewhere returns the providers of the reference's interface that the
// registry lists under another service key (group or version): at most
// maxGroupVersionLines keys are looked up; unlooked counts the further
// keys (each has a provider at least). Nothing when the registry cannot
// list its services (spi.ErrNotSupported) or fails.
func (d *Directory) elsewhere() (providers []spi.URL, unlooked int) {
	ctx, cancel := context.WithTimeout(context.Background(), elsewhereTimeout)
	defer cancel()
	keys, err := d.reg.Services(ctx)
	if err != nil {
		return nil, 0
	}
	iface, own := d.consumer.Interface(), d.consumer.ServiceKey()
	looked := 0
	for _, k := range keys {
		g, i, v := splitServiceKey(k)
		if i != iface || k == own {
			continue
		}
		if looked == maxGroupVersionLines {
			unlooked++
			continue
		}
		looked++
		ps, err := d.reg.Lookup(ctx, d.consumer.With(spi.KeyGroup, g).With(spi.KeyVersion, v))
		if err != nil {
			continue
		}
		providers = append(providers, ps...)
	}
	return providers, unlooked
}

// splitServiceKey splits "group/interface:version" (either part may be
// absent).
func splitServiceKey(k string) (group, iface, version string) {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		group, k = k[:i], k[i+1:]
	}
	if i := strings.LastIndexByte(k, ':'); i >= 0 {
		k, version = k[:i], k[i+1:]
	}
	return group, k, version
}

// maxGroupVersionLines bounds the lines Ignored gives for providers of
// another group or version: the rest are counted in one more line.
const maxGroupVersionLines = 3

// keyTransport is the URL key naming the transport extension.
const keyTransport = "transport"

// otherTransport returns why provider is left out for its transport: a
// reference that names a transport calls only the providers serving it,
// as Dubbo's <dubbo:reference protocol> calls only that protocol's
// providers ("" when it is not left out: the reference names none, the
// provider publishes none, or they agree).
func (d *Directory) otherTransport(p spi.URL) string {
	want := d.consumer.ParamOr(keyTransport, "")
	got := p.ParamOr(keyTransport, "")
	if want == "" || got == "" || want == got {
		return ""
	}
	return fmt.Sprintf("%s serves transport %s; the reference asks for transport=%s", p.Address(), got, want)
}

// otherProtocolLine says why the providers at addrs, listed by the
// registry with protocol (URL scheme) proto, were skipped, as Dubbo's
// RegistryDirectory logs "Unsupported protocol ... supported protocol":
// "1 provider listed but skipped: 127.0.0.1:20880 speaks protocol dubbo,
// not airnode (the reference calls airnode:// providers only; a Dubbo
// provider needs a Dubbo consumer)". At most three addresses are named.
func (d *Directory) otherProtocolLine(proto string, addrs []string) string {
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	n := len(addrs)
	named := strings.Join(addrs[:min(n, 3)], ", ")
	if n > 3 {
		named += fmt.Sprintf(" and %d more", n-3)
	}
	what, verb := "1 provider", "speaks"
	if n > 1 {
		what, verb = fmt.Sprintf("%d providers", n), "speak"
	}
	how := fmt.Sprintf("the reference calls %s:// providers only", d.protocol)
	if d.protocol != DefaultProtocol {
		how += " (its " + KeyProtocol + " key)"
	}
	if proto == "dubbo" {
		how += "; a Dubbo provider needs a Dubbo consumer"
	}
	return fmt.Sprintf("%s listed but skipped: %s %s protocol %s, not %s (%s)", what, named, verb, proto, d.protocol, how)
}

// keyTLS is the URL key that turns TLS on (internal/tlsconf).
const keyTLS = "tls"

// unfit returns why provider is left out for its transport
// (otherTransport) or its TLS: a provider that publishes tls=true serves
// only TLS, so a reference that sets tls=false could only fail its
// handshake (the merge keeps the consumer's tls=false and hides the
// provider's); "" when it is not left out.
func (d *Directory) unfit(p spi.URL) string {
	if why := d.otherTransport(p); why != "" {
		return why
	}
	if p.ParamOr(keyTLS, "") == "true" && d.consumer.ParamOr(keyTLS, "") == "false" {
		return fmt.Sprintf("%s serves TLS (it publishes tls=true); the reference sets tls=false: remove tls=false and give the CA that signed its certificate with tls.ca=FILE (airnode call/bench: -p tls.ca=FILE; default: the system's roots)", p.Address())
	}
	return ""
}

// Ignored returns why providers of the last pushed list were left out
// because they serve another transport than the reference names, or TLS
// while it sets tls=false (unfit), one line each, then because they are in another group or version (at most
// three lines, then "and N more in another group or version"); nil when
// none was. Built once per push; when a push leaves the reference no
// provider, the providers of its interface under other service keys are
// looked up in the registry then (registries push one service key), so
// those lines are as of the last push. When the registry no longer lists
// any provider of the reference, one line more names those it listed
// before ("127.0.0.1:20880 was listed and has left the registry
// (unregistered, or its node stopped)"). For "no provider available"
// errors.
func (d *Directory) Ignored() []string { return d.snap.Load().ignored }

// Hold sets hold, asked by every push (and Refresh) for each provider the
// directory lists that the push no longer does: a provider it returns
// true for stays listed, its invoker kept, until a push lists it again or
// a later push or Refresh finds hold false for it. The kernel holds its
// node's own providers while they drain at shutdown: the node stops
// advertising them (it unregisters first) but keeps calling itself while
// it still serves (Dubbo calls such a provider
// in-process, injvm, which airnode does not have). hold runs on the
// registry's notify goroutine with the directory's lock held: it must
// not block nor call the directory. Set it before Start; nil (the
// default) holds nothing.
func (d *Directory) Hold(hold func(provider spi.URL) bool) {
	d.applyMu.Lock()
	d.hold = hold
	d.applyMu.Unlock()
}

// Refresh applies the last pushed provider list again, in the calling
// goroutine, asking Hold's function again: a provider held until now and
// no longer held is removed (its invoker closed). A no-op while no
// provider is held, before the first push and after Close.
func (d *Directory) Refresh() {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	d.mu.Lock()
	ready := d.gotFirst && !d.closed
	d.mu.Unlock()
	if ready && d.holding {
		d.apply(d.last)
	}
}

// update applies a pushed provider list.
func (d *Directory) update(providers []spi.URL) {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	d.last = providers
	d.apply(providers)
}

// apply makes providers the directory's list, keeping the held ones
// (Hold); applyMu is held.
func (d *Directory) apply(providers []spi.URL) {
	providers = d.newest(providers)
	next := make(map[string]member, len(providers))
	var stale []spi.Invoker
	// Registries push one service key: providers of another group or
	// version come from a look-up when this push leaves none (before the
	// lock: it asks the registry).
	var elsewhere []spi.URL
	unlooked := 0
	if !d.anyTaken(providers) {
		elsewhere, unlooked = d.elsewhere()
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	var ignored, otherGV []string
	moreGV := 0
	ignoredNow := map[string]string{}
	leftOut := func(p spi.URL) {
		if why := d.otherGroupVersion(p); why != "" && !slices.Contains(otherGV, why) {
			if len(otherGV) < maxGroupVersionLines {
				otherGV = append(otherGV, why)
			} else {
				moreGV++
			}
		}
	}
	for _, p := range elsewhere {
		leftOut(p)
	}
	moreGV += unlooked
	var protocols []string              // the other protocols of providers, in order of appearance
	otherProto := map[string][]string{} // protocol -> addresses of its providers
	for _, p := range providers {
		if p.Scheme() != d.protocol {
			k := p.String()
			if _, warned := d.ignored[k]; !warned {
				d.log.Warn("provider ignored: its protocol is not the reference's", "provider", p.Address(), "url", p.Redacted(), "protocol", p.Scheme(), "reference_protocol", d.protocol)
			}
			ignoredNow[k] = "protocol " + p.Scheme()
			if _, seen := otherProto[p.Scheme()]; !seen {
				protocols = append(protocols, p.Scheme())
			}
			otherProto[p.Scheme()] = append(otherProto[p.Scheme()], p.Address())
			continue
		}
		if enabled, err := p.Bool("enabled", true); err == nil && !enabled &&
			d.groups.Has(p.ParamOr(spi.KeyGroup, "")) && d.versions.Has(p.ParamOr(spi.KeyVersion, "")) {
			// Dubbo's disabled provider (an override enabled=false): not
			// picked, said once per provider, and named in the reference's
			// SERVICE_NOT_FOUND when it leaves none
			k := p.String()
			why := p.Address() + " is disabled (enabled=false in its registry URL)"
			if _, said := d.ignored[k]; !said {
				d.log.Info("provider disabled (enabled=false): not picked", "provider", p.Address(), "url", p.Redacted())
			}
			ignoredNow[k] = why
			ignored = append(ignored, why)
			continue
		}
		if !d.accepts(p) {
			d.log.Debug("provider ignored", "provider", p.Address(), "url", p.Redacted())
			leftOut(p)
			continue
		}
		if why := d.unfit(p); why != "" {
			k := p.String()
			if _, warned := d.ignored[k]; !warned {
				d.log.Warn("provider ignored: "+why, "provider", p.Address(), "url", p.Redacted())
			}
			ignoredNow[k] = why
			ignored = append(ignored, why)
			continue
		}
		k := p.String()
		if _, dup := next[k]; dup {
			continue
		}
		if m, ok := d.members[k]; ok {
			next[k] = m
			continue
		}
		inv, err := d.newInvoker(spi.MergeURL(p, d.consumer))
		if err != nil {
			d.log.Warn("cannot create invoker", "provider", p.Address(), "url", p.Redacted(), "err", err)
			continue
		}
		next[k] = member{provider: p, invoker: inv}
		d.log.Info("provider added", "provider", p.Address())
	}
	var held []spi.URL
	var leaving []string
	for k, m := range d.members {
		if _, keep := next[k]; keep {
			continue
		}
		if d.hold != nil && d.hold(m.provider) {
			next[k] = m
			held = append(held, m.provider)
			d.log.Debug("provider unregistered but still listed: its own node is draining it", "provider", m.provider.Address())
			continue
		}
		leaving = append(leaving, k)
	}
	kept := d.protect(next, leaving) // protect.go
	d.noteHeld(held)
	listed := make(map[string]bool, len(next)) // dedupKey of each member kept
	for _, m := range next {
		listed[dedupKey(m.provider)] = true
	}
	for _, k := range leaving {
		m := d.members[k]
		if _, keep := next[k]; keep {
			continue
		}
		stale = append(stale, m.invoker)
		if listed[dedupKey(m.provider)] {
			// another entry of that address and service key stays (a
			// restarted provider's new entry): only the old one left
			// (tester74 #9: "provider removed" read as the provider gone)
			d.log.Info("stale entry of a provider left; the provider stays, at its newer entry", "provider", m.provider.Address(), "entry", m.provider.Redacted())
			continue
		}
		d.log.Info("provider removed", "provider", m.provider.Address())
		if a := m.provider.Address(); !slices.Contains(d.departed, a) {
			d.departed = append(d.departed, a)
		}
	}
	slices.SortFunc(held, func(a, b spi.URL) int { return strings.Compare(a.String(), b.String()) })
	d.holding = len(held) > 0
	if len(next) > 0 {
		d.departed = nil
	} else if len(d.departed) > 0 {
		ignored = append(ignored, departedLine(d.departed))
	}
	d.members = next
	d.ignored = ignoredNow
	for _, proto := range protocols {
		ignored = append(ignored, d.otherProtocolLine(proto, otherProto[proto]))
	}
	ignored = append(ignored, otherGV...)
	if moreGV > 0 {
		ignored = append(ignored, fmt.Sprintf("and %d more in another group or version", moreGV))
	}
	snap := &snapshot{all: make([]spi.Invoker, 0, len(next)), providers: make([]spi.URL, 0, len(next)), ignored: ignored}
	for _, p := range append(append(slices.Clip(providers), held...), kept...) {
		if m, ok := next[p.String()]; ok && !containsURL(snap.providers, p) {
			snap.all = append(snap.all, m.invoker)
			snap.providers = append(snap.providers, p)
		}
	}
	snap.methods = listedMethods(snap.providers)
	d.snap.Store(snap)
	if !d.gotFirst {
		d.gotFirst = true
		close(d.first)
	}
	changes := d.changes
	d.mu.Unlock()
	closeAll(d.log, stale)
	for _, f := range changes {
		f()
	}
}

// departedLine says, for Ignored, which providers the reference listed
// before the registry dropped them all: "127.0.0.1:20880 was listed and
// has left the registry (unregistered, or its node stopped)", at most
// maxGroupVersionLines addresses and then a count. It stands instead of a
// guess at why the registry never listed one (clusterkit's memory://
// hint): this reference did see a provider there.
func departedLine(addrs []string) string {
	shown := addrs[:min(len(addrs), maxGroupVersionLines)]
	line := strings.Join(shown, ", ")
	if more := len(addrs) - len(shown); more > 0 {
		line += fmt.Sprintf(" and %d more", more)
	}
	if len(addrs) == 1 {
		return line + " was listed and has left the registry (unregistered, or its node stopped)"
	}
	return line + " were listed and have left the registry (unregistered, or their nodes stopped)"
}

func containsURL(l []spi.URL, u spi.URL) bool {
	for _, x := range l {
		if x.Equal(u) {
			return true
		}
	}
	return false
}

func closeAll(log *slog.Logger, invs []spi.Invoker) {
	for _, inv := range invs {
		if err := inv.Close(); err != nil {
			log.Warn("close invoker", "provider", inv.URL().Address(), "err", err)
		}
	}
}

// Close stops the subscription, waits until no push is being applied, and
// closes every invoker. Idempotent.
func (d *Directory) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	sub := d.sub
	d.sub = nil
	d.mu.Unlock()
	if sub != nil {
		sub.Stop()
	}
	d.stopMulti()
	d.stopProtect()
	d.mu.Lock()
	invs := make([]spi.Invoker, 0, len(d.members))
	for _, m := range d.members {
		invs = append(invs, m.invoker)
	}
	d.members = map[string]member{}
	d.snap.Store(&snapshot{})
	d.mu.Unlock()
	var errs []error
	for _, inv := range invs {
		if err := inv.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var _ spi.Directory = (*Directory)(nil)

package directory

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Consumer URL keys of the directory's protection against registry
// notifications that drop connected providers (see Directory.Kept).
const (
	// KeyEmptyProtection (bool, default true) turns empty protection
	// on: a notification that would leave the reference no provider
	// while some of its providers are connected keeps those.
	KeyEmptyProtection = "registry.empty.protection"
	// KeyRemovalDamping (int, percent, 0..100, default
	// DefaultRemovalDamping) damps a notification that drops at least
	// this share of the reference's connected providers at once, two or
	// more: their removal waits KeyRemovalGrace. 0 or 100: off.
	KeyRemovalDamping = "registry.removal.damping"
	// KeyRemovalGrace (duration, default DefaultRemovalGrace, 100ms..1h)
	// is how long a damped removal waits.
	KeyRemovalGrace = "registry.removal.grace"
)

// DefaultRemovalDamping is KeyRemovalDamping's default, percent: a
// notification dropping a quarter or more of the connected providers at
// once (two at least) is damped. Only providers still connected and not
// shutting down count: a rolling restart drops one at a time (one
// provider is never damped), a deploy or a scale-in stops providers,
// which announce it or whose connections close (removed at once
// whatever the share), and a provider of a damped removal that does so
// later goes then. What is left at the threshold is a registry that
// lost the entries of many providers still up: a ZooKeeper wiped and
// refilling (measured: 26 to 38 of 100 listed for 0.4 s; with two
// provider processes of 50, lists of 50 to 58 of 100
// for up to 0.8 s, which 50 % missed on 8 of 20 consumers), or
// providers that lost their sessions together.
const DefaultRemovalDamping = 25

// DefaultRemovalGrace is KeyRemovalGrace's default: the ZooKeeper
// registry's default session.timeout (30s). A provider whose session a
// restarted, wiped ZooKeeper refuses opens a new one, and re-creates its
// entries, only after session.timeout without one (extensions/registry/
// zookeeper), so a fleet refills within about that much after the first
// provider is back. Only providers still connected and not shutting
// down wait: one whose connection closes, or that announces its
// shutdown, goes at once, so the grace costs nothing to a deploy.
const DefaultRemovalGrace = 30 * time.Second

// Reasons a provider is kept (Kept.Reason).
const (
	KeptEmpty  = "kept by empty protection"
	KeptDamped = "kept by removal damping"
)

// protectCheckEvery is how often, while providers are kept, the
// directory looks whether one of them lost its connection or announced
// its shutdown (it then goes) and whether a damped removal's grace has
// passed. A variable for tests.
var protectCheckEvery = 500 * time.Millisecond

// dampWindow is how long the removals of connected providers count
// towards the next notification's share (removal damping), until their
// address is listed again: a registry that drops a fleet's entries one
// by one (sessions expiring a tick apart, a registry pushing each
// change) is damped as one removal. A ZooKeeper server expires sessions
// in tickTime buckets (2s by default). A rolling restart's provider is
// back at its address (a new entry) before the next one goes, so it
// counts one at a time.
const dampWindow = 5 * time.Second

// Kept is a provider the directory lists although the registry's last
// notification does not: a connected provider kept by empty protection
// or by removal damping.
type Kept struct {
	Provider spi.URL   // as the registry listed it last
	Reason   string    // KeptEmpty or KeptDamped
	Since    time.Time // when it was first kept
	// Until is when a damped removal applies (zero for empty
	// protection: until the registry lists a provider again).
	Until time.Time
}

// String reads "127.0.0.1:20880 (kept by empty protection since
// 15:04:05)".
func (k Kept) String() string {
	s := fmt.Sprintf("%s (%s since %s", k.Provider.Address(), k.Reason, k.Since.Format("15:04:05"))
	if !k.Until.IsZero() {
		s += fmt.Sprintf(", removed at %s unless listed again", k.Until.Format("15:04:05"))
	}
	return s + ")"
}

// protection is the directory's state for empty protection and removal
// damping. Its fields other than the loop's are guarded by the
// directory's applyMu.
type protection struct {
	empty   bool          // KeyEmptyProtection
	damping int64         // KeyRemovalDamping, percent; 0: off
	grace   time.Duration // KeyRemovalGrace

	kept      map[string]Kept      // raw provider URL -> why it is kept
	emptyOn   bool                 // an empty-protection episode is on
	dampUntil time.Time            // a damping episode is on until then; zero: none
	wasHeld   map[string]bool      // providers Hold held at the last apply: never protected
	recent    map[string]time.Time // dedupKey -> when removed while connected, within dampWindow and not listed again
	probed    map[string]time.Time // raw provider URL of a kept one -> when it was probed (Prober)
	// emptyDraining: empty protection keeps draining providers, there
	// being no other (Draining).
	emptyDraining bool
	// emptyPending: the episode keeps providers that were not draining
	// when the registry dropped them, and whose probe has not answered
	// yet: the Warn waits for it (settleEmpty), since a provider's
	// draining event, sent before its unregister, can reach the
	// consumer after the registry's notification does.
	emptyPending bool
	emptyDropped int  // the episode's providers dropped, not kept (its Warn's "dropped")
	emptyWarned  bool // the episode's Warn was logged (its end is said at Info)
	view         atomic.Pointer[[]Kept]

	loopMu  sync.Mutex // guards the fields below
	running bool       // the check loop runs
	stopped bool       // Close stopped it for good
	quit    chan struct{}
	wg      sync.WaitGroup
}

// parseProtection reads the protection keys of the consumer URL.
func parseProtection(consumer spi.URL) (p *protection, err error) {
	p = &protection{}
	if p.empty, err = consumer.Bool(KeyEmptyProtection, true); err != nil {
		return nil, err
	}
	if p.damping, err = consumer.Int(KeyRemovalDamping, DefaultRemovalDamping); err != nil {
		return nil, err
	}
	if p.damping < 0 || p.damping > 100 {
		return nil, &spi.ParamError{Key: KeyRemovalDamping, Value: consumer.ParamOr(KeyRemovalDamping, ""), Want: "a percent, 0..100 (0 or 100: no damping)"}
	}
	if p.damping == 100 {
		p.damping = 0
	}
	if p.grace, err = consumer.Duration(KeyRemovalGrace, DefaultRemovalGrace); err != nil {
		return nil, err
	}
	if p.grace < 100*time.Millisecond || p.grace > time.Hour {
		return nil, &spi.ParamError{Key: KeyRemovalGrace, Value: consumer.ParamOr(KeyRemovalGrace, ""), Want: "a duration, 100ms..1h"}
	}
	return p, nil
}

// Kept returns the providers the directory lists although the
// registry's last notification does not, sorted by address: connected
// providers kept by empty protection (KeyEmptyProtection) or by removal
// damping (KeyRemovalDamping), with why and since when. Nil when none
// is; the providers Hold holds are not here (they are the node's own,
// draining). Never blocks.
func (d *Directory) Kept() []Kept {
	if v := d.prot.view.Load(); v != nil {
		return *v
	}
	return nil
}

// NotServing is an optional interface of an invoker: NotServing reports
// whether the provider's last answer said it does not serve the service
// (SERVICE_NOT_FOUND: it unexported the service while its node runs on,
// so its connection stays up). Such a provider is not kept by empty
// protection or removal damping, and one kept goes within
// protectCheckEvery of saying so.
type NotServing interface{ NotServing() bool }

// Prober is an optional interface of an invoker: a provider that the
// registry dropped is kept by empty protection or removal damping only
// while it shows it is alive. When the directory starts keeping it, it
// calls Probe once (one ping per channel, bounded by about a second, on
// goroutines of the invoker's: Probe never blocks); from probeWait on,
// the provider stays kept only if LastRead (when something was last
// read from it: a call's answer, a ping's) is after that Probe. So a hung
// provider (a stopped process, a frozen host: its connection up, nothing
// answered), whose registry session expiry is often the first sign of the
// hang, goes within probeWait + protectCheckEvery, about 2.5 s, instead
// of being called for the whole grace.
type Prober interface {
	Probe()
	LastRead() time.Time
}

// Stalled is an optional interface of an invoker: Stalled reports
// whether calls wait on the provider and nothing at all has been read
// from it for quiet. The directory does not start keeping such a
// provider (it is not probed: the silence is already there to see), so
// that when a hung provider's registry session expires after about the
// callers' timeout, the callers whose calls to it time out are not sent
// back to it (for example, the session expired 9 s after kill -STOP,
// the 10 s timeouts returned 1 s later, and a probe's 2.5 s let every
// caller pick it again).
type Stalled interface {
	Stalled(quiet time.Duration) bool
}

// probeWait is how long a kept Prober has to show it is alive after its
// Probe: the probe's ping waits up to 1 s, and a provider that answers
// at all does so within milliseconds (pings are answered by its reader,
// not its workers), so 2 s leaves a loaded machine's scheduling twice
// the ping's own bound, while a hung provider is still dropped long
// before a call timeout (1 s by default, often more) would have been
// paid many times over. A variable for tests.
var probeWait = 2 * time.Second

// Draining is an optional interface of an invoker: Draining reports
// whether the provider announced that it is shutting down after a wait
// (the kernel's draining event: its node unregistered it and serves on
// for shutdown.wait so that consumers stop sending first). Removal
// damping does not keep such a provider, and empty protection keeps it
// only when no provider that is not draining is left to keep (failing
// every call instead would not help: it still serves); one kept goes
// within protectCheckEvery of saying so. Draining does not
// make it unavailable: a provider the registry lists is called as before.
type Draining interface{ Draining() bool }

// keepable reports whether inv may be kept although the registry no
// longer lists it: available, not saying it does not serve the service
// (NotServing), not draining (Draining) unless drainingOK, not Stalled
// for probeWait when it is not kept yet (probed zero), and, for a Prober
// probed at probed, something read from it since, once probeWait has
// passed.
func keepable(inv spi.Invoker, probed, now time.Time, drainingOK bool) bool {
	if !inv.Available() {
		return false
	}
	if ns, ok := inv.(NotServing); ok && ns.NotServing() {
		return false
	}
	if dr, ok := inv.(Draining); ok && !drainingOK && dr.Draining() {
		return false
	}
	if st, ok := inv.(Stalled); ok && probed.IsZero() && st.Stalled(probeWait) {
		return false
	}
	if pr, ok := inv.(Prober); ok && !probed.IsZero() && now.Sub(probed) > probeWait {
		return pr.LastRead().After(probed)
	}
	return true
}

// protect decides which of leaving (the keys of members the
// notification no longer lists and Hold does not hold) stay: it adds
// them to next and returns their URLs. With d.applyMu and d.mu held.
//
// Empty protection (Dubbo's registry enable-empty-protection, Nacos'
// namingPushEmptyProtection: a push of an empty list keeps the last
// one): when next would be empty, every leaving provider that is
// available (connected, answered its ping, not shutting down: read-only
// or go-away make it unavailable; so does an outlier ejection) and not
// answering SERVICE_NOT_FOUND (NotServing) stays,
// until the registry lists a provider again. Unlike Dubbo, which keeps
// the whole last list, a provider whose connection is down is not kept:
// the protection keeps calls going, it does not guess who is alive.
//
// A provider stays kept only while it shows it is alive (Prober): it
// is probed when it starts being kept, and one from which nothing was
// read within probeWait after goes at the next check. A
// draining one (Draining) is kept by empty protection only when no other
// can be.
//
// Removal damping (the idea of Nacos' protectThreshold, which serves
// every instance when too few are healthy, applied to what a push
// removes): when the notification drops p.damping percent or more of
// the members that are available, two or more (counting, on both sides, the
// available providers removed within the last dampWindow: a registry
// dropping a fleet one entry at a time is one removal), those still
// available stay for p.grace, or until listed again; so do those that
// later notifications drop during that grace. Unavailable ones go at
// once.
func (d *Directory) protect(next map[string]member, leaving []string) []spi.URL {
	p := d.prot
	now := time.Now()
	connected := 0
	for k, m := range d.members {
		if keepable(m.invoker, p.probed[k], now, false) {
			connected++
		}
	}
	// A leaving entry whose address and service key are listed by
	// another entry (a restart's newer one, or a changed URL) is
	// replaced, not removed (dedup.go).
	listedKeys := make(map[string]bool, len(next))
	for _, m := range next {
		listedKeys[dedupKey(m.provider)] = true
	}
	var up []string // leaving, not replaced, and available: candidates to keep
	for _, k := range leaving {
		m := d.members[k]
		if !p.wasHeld[k] && !listedKeys[dedupKey(m.provider)] && keepable(m.invoker, p.probed[k], now, false) {
			up = append(up, k)
		}
	}
	// With nothing listed and nothing else to keep, empty protection
	// keeps the draining providers: they still serve until they close.
	p.emptyDraining = false
	if len(next) == 0 && len(up) == 0 && p.empty {
		for _, k := range leaving {
			m := d.members[k]
			if !p.wasHeld[k] && keepable(m.invoker, p.probed[k], now, true) {
				up = append(up, k)
				p.emptyDraining = true
			}
		}
	}
	slices.Sort(up)
	listed := len(next)
	// Connected providers removed within dampWindow and not listed
	// again (a rolling restart's provider is back at its address in a
	// moment): part of this removal.
	for k, at := range p.recent {
		if now.Sub(at) >= dampWindow || listedKeys[k] {
			delete(p.recent, k)
		}
	}
	recent := len(p.recent)
	reason := ""
	switch {
	case listed == 0 && p.empty && len(up) > 0:
		reason = KeptEmpty
		switch {
		case p.emptyDraining && (!p.emptyOn || p.emptyPending):
			// Every provider left announced its shutdown: nothing was
			// lost that empty protection guards against (no Warn, not
			// counted); they are called until their connections close.
			p.emptyOn, p.emptyPending = true, false
			d.log.Info(fmt.Sprintf("registry %s lists no provider of %s; its %d provider(s) announced their shutdown (draining): calling them until their connections close",
				d.desc, d.consumer.ServiceKey(), len(up)), "kept", len(up))
		case !p.emptyOn:
			p.emptyOn, p.emptyDropped = true, len(leaving)-len(up)
			p.emptyPending = slices.ContainsFunc(up, func(k string) bool {
				_, ok := d.members[k].invoker.(Prober)
				return ok
			})
			if !p.emptyPending {
				d.warnEmpty(len(up))
			}
		}
	case listed == 0:
		d.endEmpty("the providers kept have gone (connection closed or shutting down)")
	default:
		d.endEmpty(fmt.Sprintf("the registry lists %d provider(s) again", listed))
		if !p.dampUntil.IsZero() && !now.Before(p.dampUntil) {
			p.dampUntil = time.Time{}
			d.log.Info("damped removal ended: its grace has passed; removing the providers the registry still does not list",
				"removed", len(leaving), "grace", p.grace)
			break
		}
		if n := len(up) + recent; p.dampUntil.IsZero() && len(up) > 0 && p.damping > 0 && n >= 2 && int64(n)*100 >= p.damping*int64(connected+recent) {
			p.dampUntil = now.Add(p.grace)
			counters.Directory.DampedRemovals.Inc()
			d.log.Warn(fmt.Sprintf("registry %s dropped %d of the %d connected providers of %s at once; removing them in %v unless listed again (URL keys %s, %s)",
				d.desc, len(up)+recent, connected+recent, d.consumer.ServiceKey(), p.grace, KeyRemovalDamping, KeyRemovalGrace),
				"dropped", len(up)+recent, "removed_already", recent, "connected", connected+recent, "listed", listed, "grace", p.grace)
		}
		if !p.dampUntil.IsZero() {
			reason = KeptDamped
		}
	}
	kept := map[string]Kept{}
	probed := map[string]time.Time{}
	var urls []spi.URL
	if reason == "" {
		for _, k := range up {
			if p.recent == nil {
				p.recent = map[string]time.Time{}
			}
			p.recent[dedupKey(d.members[k].provider)] = now
		}
	} else {
		for _, k := range up {
			m := d.members[k]
			next[k] = m
			urls = append(urls, m.provider)
			was, ok := p.kept[k]
			if !ok || was.Reason != reason {
				was = Kept{Provider: m.provider, Reason: reason, Since: now}
			}
			if reason == KeptDamped {
				was.Until = p.dampUntil
			}
			kept[k] = was
			// One probe per provider per episode (Prober): from its
			// first keeping until the registry lists it again.
			at, ok := p.probed[k]
			if !ok {
				at = now
				if pr, ok := m.invoker.(Prober); ok {
					pr.Probe()
				}
			}
			probed[k] = at
		}
	}
	if len(kept) == 0 && !p.dampUntil.IsZero() {
		p.dampUntil = time.Time{}
		d.log.Info("damped removal ended: the registry lists the providers again, or their connections closed")
	}
	p.kept = kept
	p.probed = probed
	view := make([]Kept, 0, len(kept))
	for _, k := range kept {
		view = append(view, k)
	}
	slices.SortFunc(view, func(a, b Kept) int { return strings.Compare(a.Provider.Address(), b.Provider.Address()) })
	if len(view) == 0 {
		view = nil
	}
	p.view.Store(&view)
	if len(kept) > 0 {
		d.startProtectLoop()
	}
	return urls
}

// warnEmpty logs the empty-protection Warn of the episode keeping n
// providers, and counts the episode.
func (d *Directory) warnEmpty(n int) {
	p := d.prot
	p.emptyPending, p.emptyWarned = false, true
	counters.Directory.EmptyProtections.Inc()
	d.log.Warn(fmt.Sprintf("registry %s lists no provider of %s; keeping the %d still connected (empty protection; URL key %s=false turns it off)",
		d.desc, d.consumer.ServiceKey(), n, KeyEmptyProtection),
		"kept", n, "dropped", p.emptyDropped)
}

// settleEmpty decides a pending empty-protection Warn (emptyPending) at
// a check of the kept providers: each kept Prober has answered the probe
// made when it was first kept, none saying it drains. Its answer follows
// on the connection whatever the provider wrote before it, a draining
// event included, so a provider that announced its shutdown is known by
// then as draining (protect then says so at Info) and the Warn is left
// for providers that are up and did not announce anything: a registry
// that lost them. One whose probe is never answered goes (keepable) with
// no Warn. With d.applyMu held.
func (d *Directory) settleEmpty(members map[string]member) {
	p := d.prot
	if !p.emptyPending || len(p.kept) == 0 {
		return
	}
	for k := range p.kept {
		m, ok := members[k]
		if !ok {
			return
		}
		if dr, ok := m.invoker.(Draining); ok && dr.Draining() {
			return // the next apply keeps it as draining, and says so
		}
		if pr, ok := m.invoker.(Prober); ok && !pr.LastRead().After(p.probed[k]) {
			return // not answered yet
		}
	}
	d.warnEmpty(len(p.kept))
}

// endEmpty ends an empty-protection episode, saying why at Info when it
// was warned of.
func (d *Directory) endEmpty(why string) {
	p := d.prot
	if p.emptyOn {
		warned := p.emptyWarned
		p.emptyOn, p.emptyPending, p.emptyWarned = false, false, false
		if warned {
			d.log.Info("empty protection ended: " + why)
		}
	}
}

// noteHeld records the providers Hold held at this apply: one it lets go
// later (its node drained it) is removed at once, never protected.
func (d *Directory) noteHeld(held []spi.URL) {
	if len(held) == 0 && len(d.prot.wasHeld) == 0 {
		return
	}
	m := make(map[string]bool, len(held))
	for _, p := range held {
		m[p.String()] = true
	}
	d.prot.wasHeld = m
}

// startProtectLoop starts, unless it runs, the goroutine that re-applies
// the last notification when a kept provider became unavailable or a
// damped removal's grace has passed. With d.applyMu held.
func (d *Directory) startProtectLoop() {
	p := d.prot
	p.loopMu.Lock()
	defer p.loopMu.Unlock()
	if p.running || p.stopped {
		return
	}
	if p.quit == nil {
		p.quit = make(chan struct{})
	}
	p.running = true
	p.wg.Add(1)
	go d.protectLoop(p.quit)
}

// protectLoop checks the kept providers every protectCheckEvery until
// none is kept or Close.
func (d *Directory) protectLoop(quit chan struct{}) {
	defer d.prot.wg.Done()
	t := time.NewTicker(protectCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			if !d.recheckKept() {
				return
			}
		}
	}
}

// recheckKept applies the last notification again when a kept provider
// is no longer available or a damped removal's grace has passed; it
// reports whether providers are still kept (else the loop has been
// marked stopped, under applyMu, so that the next apply that keeps one
// starts it again).
func (d *Directory) recheckKept() bool {
	d.applyMu.Lock()
	defer d.applyMu.Unlock()
	p := d.prot
	d.mu.Lock()
	closed := d.closed
	members := d.members
	d.mu.Unlock()
	if !closed {
		now := time.Now()
		due := !p.dampUntil.IsZero() && !now.Before(p.dampUntil)
		for k := range p.kept {
			if m, ok := members[k]; !ok || !keepable(m.invoker, p.probed[k], now, p.emptyDraining) {
				due = true
				break
			}
		}
		if due {
			d.apply(d.last)
		} else {
			d.settleEmpty(members)
		}
	}
	p.loopMu.Lock()
	defer p.loopMu.Unlock()
	if closed || len(p.kept) == 0 {
		p.running = false
		return false
	}
	return true
}

// stopProtect stops the check loop for good and waits for it (Close).
func (d *Directory) stopProtect() {
	p := d.prot
	p.loopMu.Lock()
	p.stopped = true
	if p.quit != nil && p.running {
		close(p.quit)
		p.quit = nil
	}
	p.loopMu.Unlock()
	p.wg.Wait()
}

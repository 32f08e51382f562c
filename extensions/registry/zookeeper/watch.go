package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/internal/groupversion"
	"github.com/airnode/airnode/spi"
)

// Subscribe watches the providers node of consumer's interface and
// pushes the providers whose group and version consumer accepts (as
// Lookup). The subscriptions of one interface share one ZooKeeper watch
// and one read of the node per change (Dubbo's ZookeeperRegistry keeps
// one child listener per path the same way): n references to one
// interface (their own groups and versions) cost one read per change, not
// n. The first list comes from ZooKeeper (the interface's last read when
// another subscription already watches it), or — when no session is
// established within connect.timeout, or at once while ZooKeeper is known
// to be down — from the interface's file.cache list if it holds one (a
// warning gives its age); without a cache entry Subscribe fails as Lookup
// does, or, when the registry URL says check=false, logs a warning and
// pushes an empty first list, the providers following when a session
// comes. A providers node whose ACL refuses this client fails Subscribe at
// once with ZooKeeper's "not authenticated" and what to do (readable).
func (r *Registry) Subscribe(ctx context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	iface, m, err := consumerOf(consumer)
	if err != nil {
		return nil, err
	}
	if _, err := r.connection(); err != nil {
		return nil, err
	}
	// With no session after connect.timeout and nothing in file.cache, no
	// provider list can come: say so now instead of leaving the caller to
	// wait out its own deadline — unless the registry URL says check=false
	// (Dubbo's registry check off): then the first list is empty and the
	// providers come with the session (tester71 #11: a consumer started
	// before ZooKeeper, which Reference.WaitAvailable then waits for).
	unlisted := false
	if _, _, cached := r.cache.get(iface); !cached && !r.waitCtx(ctx) && !r.isClosed() {
		if r.p.check || ctx.Err() != nil {
			return nil, fmt.Errorf("%w; add %s=false to the registry URL to start with no provider and list them when ZooKeeper answers (Dubbo's registry check)",
				r.downError(ctx, "no "+KeyFileCache+" entry for "+iface), KeyCheck)
		}
		r.log.Warn("no session yet; no provider listed until one is (check=false)", "interface", iface,
			"last_dial_error", strings.TrimPrefix(r.lastDialError(), ": last dial: "))
		unlisted = true
	}
	if err := r.readable(iface, consumer.ParamOr("application", "")); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	w := r.watches[iface]
	if w == nil {
		w = &watch{
			reg:   r,
			iface: iface,
			path:  r.categoryPath(iface, Providers),
			app:   consumer.ParamOr("application", ""),
			join:  make(chan struct{}, 1),
			quit:  make(chan struct{}),
			done:  make(chan struct{}),
			subs:  map[*subscription]struct{}{},
		}
		r.watches[iface] = w
		go w.loop()
	}
	s := &subscription{
		w:         w,
		key:       consumer.ServiceKey(),
		match:     m,
		pusher:    push.New(notify),
		listedGen: -1,
	}
	if unlisted {
		s.pusher.Push(nil) // the first list: none yet
		s.pushed, s.lastEmpty, s.triedCache = true, true, true
	}
	w.subs[s] = struct{}{}
	select {
	case w.join <- struct{}{}:
	default:
	}
	return s, nil
}

// readable checks, before the first subscription of iface watches its
// providers node, that this client may list it (creating it, as the
// watch would, when it is missing): a node whose ACL refuses the client
// (zk.ErrNoAuth) fails Subscribe at once, naming the node and what to do
// (denied), where the watch would retry it forever and leave the caller
// waiting out its deadline for a first list. Without a session, or once
// a watch of iface runs, it checks nothing (one read per interface);
// other errors are left to the watch, which retries them. app is the
// consumer's application key ("" when none), for warnOverrides.
func (r *Registry) readable(iface, app string) error {
	r.mu.Lock()
	_, watched := r.watches[iface]
	conn, up := r.conn, r.up
	r.mu.Unlock()
	if watched || !up || conn == nil {
		return nil
	}
	r.warnOverrides(conn, iface, app)
	path := r.categoryPath(iface, Providers)
	_, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		if err = r.ensurePath(conn, path); errors.Is(err, zk.ErrNoAuth) {
			return r.denied(err)
		}
		return nil
	}
	if errors.Is(err, zk.ErrNoAuth) {
		return r.denied(fmt.Errorf("zookeeper registry: list %s: %w", path, err))
	}
	return nil
}

// warnOverrides logs, at the first subscription of iface, the Dubbo
// Admin rules that airnode does not apply (an override's disable or
// weight, a tag or condition route): an operator who clicked "disable"
// in Dubbo Admin is told by the consumers that nothing changed. It looks
// in both places Dubbo keeps them in ZooKeeper: Dubbo 2.6's
// configurators and routers nodes under the interface (tester70 #2), and
// Dubbo 2.7/3's config center (configCenterRules), one warning for
// each place that holds some; for a one-shot process (UseOneShot) one
// warning in all, naming each place. A node that is missing or cannot be
// read says nothing.
func (r *Registry) warnOverrides(conn *zk.Conn, iface, app string) {
	r.mu.Lock()
	oneShot := r.oneShot
	r.mu.Unlock()
	var places []string // a one-shot's: each rules node and config-center rule
	for _, cat := range []string{"configurators", "routers"} {
		path := r.categoryPath(iface, cat)
		children, _, err := conn.Children(path)
		if err != nil || len(children) == 0 {
			continue
		}
		if oneShot {
			places = append(places, path)
			continue
		}
		r.log.Warn("Dubbo Admin rules under "+path+" are not applied by airnode (overrides' disable and weight, routes): take a provider out of rotation by stopping it or restarting it with weight=0",
			"interface", iface, "rules", len(children))
	}
	path := r.p.root + configCenterPath
	if children, _, err := conn.Children(path); err == nil {
		if rules := configCenterRules(children, iface, app); len(rules) > 0 {
			if oneShot {
				for _, rule := range rules {
					places = append(places, path+"/"+rule)
				}
			} else {
				r.log.Warn("Dubbo 2.7/3 governance rules in the config center under "+path+" are not applied by airnode (overrides' disable and weight, condition and tag routes): take a provider out of rotation by stopping it or restarting it with weight=0",
					"interface", iface, "rules", strings.Join(rules, ","))
			}
		}
	}
	if len(places) > 0 {
		r.log.Warn("Dubbo Admin rules are not applied by airnode (overrides' disable and weight, routes; airnode registry ls lists them)", "interface", iface, "rules", strings.Join(places, ","))
	}
}

// RulesOf is where Dubbo Admin rules for one interface are, which
// airnode does not apply (Rules).
type RulesOf struct {
	// Legacy are the Dubbo 2.6 nodes under the interface that hold
	// rules, /<root>/<interface>/configurators and .../routers, with
	// how many rules each holds; in that order, only those with some.
	Legacy []RuleNode
	// ConfigCenter are the full paths of the Dubbo 2.7/3 rules for the
	// interface in the config center (/<root>/config/dubbo/<key>.configurators,
	// .condition-router, .tag-router), sorted.
	ConfigCenter []string
}

// RuleNode is a Dubbo 2.6 rules node and the number of rules under it.
type RuleNode struct {
	Path  string
	Rules int
}

// Rules reads, in three ZooKeeper requests, where Dubbo Admin rules for
// interface iface are (app: an application whose config-center rules to
// include too, "" for none), which airnode does not apply: `airnode
// registry ls` shows them. A node that is missing holds none; another
// failure (no session, an ACL that refuses the client) is returned,
// naming the node.
func (r *Registry) Rules(ctx context.Context, iface, app string) (RulesOf, error) {
	var out RulesOf
	conn, err := r.connection()
	if err != nil {
		return out, err
	}
	if !r.waitCtx(ctx) {
		return out, fmt.Errorf("zookeeper registry: no session to read the rules of %s", iface)
	}
	for _, cat := range []string{"configurators", "routers"} {
		path := r.categoryPath(iface, cat)
		children, _, err := conn.Children(path)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("zookeeper registry: list %s: %w", path, err)
		}
		if len(children) > 0 {
			out.Legacy = append(out.Legacy, RuleNode{Path: path, Rules: len(children)})
		}
	}
	path := r.p.root + configCenterPath
	children, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("zookeeper registry: list %s: %w", path, err)
	}
	for _, name := range configCenterRules(children, iface, app) {
		out.ConfigCenter = append(out.ConfigCenter, path+"/"+name)
	}
	return out, nil
}

// configCenterPath is where Dubbo 2.7/3 with ZooKeeper as its config
// center (namespace dubbo, group dubbo: the defaults) keeps the
// governance rules Dubbo Admin writes, under the registry's root:
// /dubbo/config/dubbo/<key><suffix>.
const configCenterPath = "/config/dubbo"

// configCenterSuffixes are the suffixes of Dubbo 2.7/3's governance
// rules in the config center: overrides, condition routes, tag routes.
var configCenterSuffixes = []string{".configurators", ".condition-router", ".tag-router"}

// configCenterRules returns the names among a config center's children
// that are rules for interface iface or application app (app "": none):
// a rule key followed by one of configCenterSuffixes, the key being the
// interface (Dubbo Admin 0.1: demo.Echo.configurators), Dubbo 2.7.x's
// colon-separated service key interface:version:group (demo.Echo::,
// demo.Echo:1.0:g), Dubbo 2.7.0's group*interface:version, or the
// application (app.configurators, app.tag-router). Sorted.
func configCenterRules(children []string, iface, app string) []string {
	var out []string
	for _, name := range children {
		for _, suffix := range configCenterSuffixes {
			key, ok := strings.CutSuffix(name, suffix)
			if !ok {
				continue
			}
			if _, k, ok := strings.Cut(key, "*"); ok {
				key = k // group*interface:version
			}
			if key == iface || strings.HasPrefix(key, iface+":") || (app != "" && key == app) {
				out = append(out, name)
			}
			break
		}
	}
	slices.Sort(out)
	return out
}

// watch is the one ZooKeeper watch of an interface's providers node,
// shared by the interface's subscriptions: its loop reads the node and
// re-arms the watch after every event and every new session, once for
// all of them, and hands the list to each, which takes the providers of
// its group and version and pushes them to its own listener. The last
// subscription's Stop ends the loop.
type watch struct {
	reg   *Registry
	iface string
	path  string
	app   string        // the first subscription's application key, for the config center's rules ("" for none)
	join  chan struct{} // a subscription joined: list to it without waiting for a change
	quit  chan struct{} // closed by the last Stop, or Close
	done  chan struct{} // closed when loop has returned
	once  sync.Once
	subs  map[*subscription]struct{} // guarded by reg.mu
}

// subscription is one Subscribe's listener of a watch. The fields after
// pusher belong to the watch's loop.
type subscription struct {
	w      *watch
	key    string // the consumer's service key, for log lines
	match  groupversion.Matcher
	pusher *push.Pusher

	pushed     bool      // a list has been pushed
	lastEmpty  bool      // the last pushed list was empty
	listedGen  int       // session generation of the last list given; -1: none
	grace      time.Time // hold empty lists back until then
	holding    bool      // an empty list is held back (until grace)
	triedCache bool      // the first wait ran out: file.cache was consulted
	read       int       // the watch's read last given (watch.loop's reads)
}

// subscribers returns w's subscriptions.
func (w *watch) subscribers() []*subscription {
	w.reg.mu.Lock()
	defer w.reg.mu.Unlock()
	out := make([]*subscription, 0, len(w.subs))
	for s := range w.subs {
		out = append(out, s)
	}
	return out
}

// loop reads the providers node and re-arms the watch after every event
// and every reconnect, until the last Stop or Close, and gives every read
// to each subscription (give); a subscription that joins between reads
// gets the last one.
func (w *watch) loop() {
	defer close(w.done)
	rulesDone := make(chan struct{})
	go func() { // Dubbo Admin rules written while consumers run (tester74 #6)
		defer close(rulesDone)
		w.rules()
	}()
	defer func() { <-rulesDone }()
	r := w.reg
	var (
		all   []spi.URL // the last read: the providers of every group and version
		strs  []string  // their canonical strings
		reads int       // reads made
		gen   int       // session generation of the last read
	)
	for {
		first := false // a subscription waits for its first list: wait as Lookup does, then try file.cache
		for _, s := range w.subscribers() {
			first = first || !s.pushed && !s.triedCache
		}
		var up bool
		if first {
			up = r.waitCtxOr(quitCtx(w.quit), w.join)
		} else {
			up = r.waitUpOr(w.quit, w.join, 0)
		}
		if !up {
			if r.isClosed() || w.stopped() {
				return
			}
			if first && r.knownDown() { // the wait ran out, not a joining subscription
				w.fromCache()
			}
			continue
		}
		r.mu.Lock()
		conn, up, sessionGen, next := r.conn, r.up, r.sessionGen, r.upCh
		r.mu.Unlock()
		if !up {
			continue
		}
		r.watchReads.Add(1)
		children, _, changed, err := conn.ChildrenW(w.path)
		if errors.Is(err, zk.ErrNoNode) {
			if err = r.ensurePath(conn, w.path); err == nil {
				continue
			}
		}
		if err != nil {
			r.log.Debug("list failed; retrying", "interface", w.iface, "err", err)
			select {
			case <-w.quit:
				return
			case <-time.After(retryDelay):
			}
			continue
		}
		all, strs = r.decode(w.iface, children)
		all, strs = r.preferLive(conn, w.iface, all, strs)
		reads++
		gen = sessionGen
		w.give(all, strs, gen, reads)
		for waiting := true; waiting; {
			var hold *time.Timer
			var holdC <-chan time.Time
			if until := w.heldUntil(); !until.IsZero() {
				hold = time.NewTimer(time.Until(until))
				holdC = hold.C
			}
			select {
			case <-w.quit:
			case <-changed:
				waiting = false
			case <-next: // reconnected: full re-list
				waiting = false
			case <-holdC: // a grace has passed: give the held lists
				w.give(all, strs, gen, reads)
			case <-w.join: // give the last read to those who joined since
				w.give(all, strs, gen, reads)
			}
			if hold != nil {
				hold.Stop()
			}
			if w.stopped() {
				return
			}
		}
	}
}

// give gives the read reads (all, strs, of session generation gen) to
// every subscription that has not had it or holds back an empty list,
// and writes file.cache when one of them pushed.
func (w *watch) give(all []spi.URL, strs []string, gen, reads int) {
	r := w.reg
	now := time.Now()
	pushed := false
	for _, s := range w.subscribers() {
		if s.read == reads && !s.holding {
			continue
		}
		s.read = reads
		list := matching(s.match, all)
		if s.listedGen >= 0 && gen != s.listedGen {
			s.grace = now.Add(ExpiryGrace)
		}
		s.listedGen = gen
		if len(list) == 0 && s.pushed && !s.lastEmpty && now.Before(s.grace) {
			if !s.holding {
				r.log.Info("empty list right after a new session; waiting for providers to re-register", "service", s.key)
			}
			s.holding = true
			continue
		}
		s.holding, s.grace = false, time.Time{}
		s.pusher.Push(list)
		s.pushed, s.lastEmpty = true, len(list) == 0
		pushed = true
	}
	if pushed {
		r.putCache(w.iface, strs)
	}
}

// heldUntil returns the earliest grace of the subscriptions holding back
// an empty list; zero when none is.
func (w *watch) heldUntil() time.Time {
	var until time.Time
	for _, s := range w.subscribers() {
		if s.holding && (until.IsZero() || s.grace.Before(until)) {
			until = s.grace
		}
	}
	return until
}

// fromCache pushes the interface's file.cache list, when there is one, to
// each subscription waiting for its first list, once.
func (w *watch) fromCache() {
	r := w.reg
	for _, s := range w.subscribers() {
		if s.pushed || s.triedCache {
			continue
		}
		s.triedCache = true
		all, saved, ok := r.cache.get(w.iface)
		if !ok {
			continue
		}
		list := matching(s.match, all)
		r.mu.Lock()
		n := r.noteLocked(saved)
		r.mu.Unlock()
		r.log.Warn("no session; using file.cache", "service", s.key, "providers", len(list), "cache", n.String())
		s.pusher.Push(list)
		s.pushed, s.lastEmpty = true, len(list) == 0
	}
}

func (w *watch) signal() { w.once.Do(func() { close(w.quit) }) }

func (w *watch) stopped() bool {
	select {
	case <-w.quit:
		return true
	default:
		return false
	}
}

// quitCtx is a context done when quit closes (for waitCtx); it holds no
// goroutine or timer.
type quitCtx <-chan struct{}

func (q quitCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (q quitCtx) Done() <-chan struct{}       { return q }
func (q quitCtx) Value(any) any               { return nil }
func (q quitCtx) Err() error {
	select {
	case <-q:
		return context.Canceled
	default:
		return nil
	}
}

// Stop ends the subscription and waits until notify is not running;
// idempotent. The last subscription of an interface ends its watch's
// loop.
func (s *subscription) Stop() {
	w := s.w
	r := w.reg
	r.mu.Lock()
	last := false
	if _, ok := w.subs[s]; ok {
		delete(w.subs, s)
		if len(w.subs) == 0 {
			last = true
			if r.watches[w.iface] == w {
				delete(r.watches, w.iface)
			}
		}
	}
	r.mu.Unlock()
	if last {
		w.signal()
		<-w.done
	}
	s.pusher.Stop()
}

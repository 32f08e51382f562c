package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/groupversion"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name and URL scheme of the zookeeper registry.
const Name = "zookeeper"

// Category nodes under an interface node, and the values of KeyCategory
// (Dubbo's names).
const (
	Providers = "providers"
	Consumers = "consumers"
)

// KeyCategory is Dubbo's URL key naming an entry's category node
// (Providers or Consumers); the registry adds it, with spi.KeyInterface,
// to the URL it writes and takes it off the URLs it reads.
const KeyCategory = "category"

// ExpiryGrace is how long, right after a new session, a subscription holds
// back an empty re-list when it last pushed providers: providers whose
// sessions expired in the same outage re-register within it.
const ExpiryGrace = 3 * time.Second

// retryDelay paces retries of a failed list while the session is up.
const retryDelay = 200 * time.Millisecond

// Builder builds zookeeper registries. The zero value is ready.
type Builder struct {
	// Logger receives the registry's log lines; nil means slog.Default().
	Logger *slog.Logger
}

// Name returns "zookeeper".
func (Builder) Name() string { return Name }

// Reach returns spi.ReachShared: every process of every machine using the
// ensemble finds what is registered.
func (Builder) Reach() spi.RegistryReach { return spi.ReachShared }

// Build validates u (keys in the package doc). Pure: the session is opened
// on first use.
func (b Builder) Build(u spi.URL) (spi.Registry, error) {
	p, err := parseParams(u)
	if err != nil {
		return nil, err
	}
	log := b.Logger
	if log == nil {
		log = slog.Default()
	}
	r := &Registry{
		p:          p,
		desc:       "zookeeper://" + strings.Join(p.servers, ",") + p.root,
		log:        log.With("component", "zookeeper registry", "registry", "zookeeper://"+p.servers[0]),
		ownLog:     b.Logger != nil,
		registered: map[string]spi.URL{},
		withdrawn:  map[string]spi.URL{},
		pending:    map[string]spi.URL{},
		queued:     map[string]queuedEntry{},
		guarded:    map[string]int64{},
		watches:    map[string]*watch{},
		notes:      map[string]CacheNote{},
		upCh:       make(chan struct{}),
	}
	if p.cache != "" {
		r.cache = &cache{path: p.cache}
	}
	if p.user != "" {
		r.acl = zk.DigestACL(zk.PermAll, p.user, p.password)
	} else {
		r.acl = zk.WorldACL(zk.PermAll)
	}
	return r, nil
}

var errClosed = errors.New("zookeeper registry: closed")

// UseLogger makes the registry log through l (spi.LoggerUser: the kernel
// hands it its node's logger right after Build, so that a process logs
// in one format), unless Builder.Logger was set or the registry has
// already opened its session.
func (r *Registry) UseLogger(l *slog.Logger) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ownLog || l == nil || r.conn != nil || r.closed {
		return
	}
	r.log = l.With("component", "zookeeper registry", "registry", "zookeeper://"+r.p.servers[0])
}

// UseOneShot tells the registry that its process is a one-shot consumer
// (spi.OneShotRegistry: the kernel calls it after Build for a node made
// WithOneShot, airnode call): the Dubbo Admin rules a subscription finds
// and airnode does not apply, in both places Dubbo keeps them, are then
// said in one Warn line rather than one per place, as every run of the
// command would repeat them.
func (r *Registry) UseOneShot() {
	r.mu.Lock()
	r.oneShot = true
	r.mu.Unlock()
}

// Registry is one ZooKeeper session's worth of registrations and
// subscriptions.
type Registry struct {
	p      params
	desc   string
	log    *slog.Logger
	ownLog bool // Builder.Logger was set: UseLogger keeps it
	// oneShot: the node is a one-shot process (UseOneShot): warnOverrides
	// says the rules in one line
	oneShot bool
	acl     []zk.ACL
	cache   *cache

	mu         sync.Mutex
	conn       *zk.Conn
	handle     *handle                // conn's: the current zk handle
	registered map[string]spi.URL     // canonical URL -> URL, re-created on every new session
	withdrawn  map[string]spi.URL     // unregistered while disconnected: deleted when up
	pending    map[string]spi.URL     // registered, creation failed: retried
	pendingErr error                  // the last creation failure that put an entry in pending (Health)
	queued     map[string]queuedEntry // registered without a session and not created since (Register queued them): Health, checkQueued, Unregister
	queuedSaid time.Time              // the last Warn that queued provider entries are not in ZooKeeper (Register's, checkQueued's)
	guarded    map[string]int64       // canonical URL -> session whose exists watch guards its entry (guard)
	watches    map[string]*watch      // interface -> the watch its subscriptions share
	ruleHook   func(RuleChange)       // OnRuleChange's function, or nil
	stateHook  func(SessionChange)    // OnSessionChange's function, or nil
	closed     bool
	up         bool                 // a session is established
	gaveUp     bool                 // a wait for a session ran out of time since the last one was up
	downSince  time.Time            // no session since then (first contact, or the session's loss noticed); zero while up
	lastHeard  time.Time            // the lost session's last contact with ZooKeeper (handle.heard when the loss was noticed); zero while up
	notes      map[string]CacheNote // service key ("" for Services) -> the last answer, when it came from file.cache
	decoded    decodedNodes         // the providers nodes as last read (decode)
	upCh       chan struct{}        // closed at the next transition to up
	session    int64                // id of the last session seen
	sessionGen int                  // counts new sessions
	counted    int64                // id of the last session counted in counters.Registry.SessionExpiries
	authed     bool
	unlist     func() // removes the registry from counters.RegistryConnections; nil before its first connection
	// entriesGone: the "provider entries ... are not in ZooKeeper" WARN
	// was written for this outage; entriesBack: a new session is
	// re-creating them, and their creation is to be said at Info.
	entriesGone, entriesBack bool
	saidGranted              time.Duration // the granted session timeout last logged (differing from session.timeout)
	// saidDown: the Info that the session is kept while ZooKeeper is
	// down past session.timeout since the last contact was written for
	// this outage (checkExpired)
	saidDown bool

	dialErr    atomic.Pointer[error] // the last failed dial to a server; nil after a successful one
	paused     pauseClock            // notices that the process did not run (the connection-lost Warn)
	watchReads atomic.Int64          // ChildrenW reads of providers nodes by watches, for tests
	wg         sync.WaitGroup
}

// String describes the registry for messages: its servers and root, without
// credentials ("zookeeper://127.0.0.1:2181/airnode").
func (r *Registry) String() string { return r.desc }

func escape(s string) string { return url.QueryEscape(s) }

func category(u spi.URL) string {
	if u.ParamOr(spi.KeySide, "") == string(spi.Consumer) {
		return Consumers
	}
	return Providers
}

// categoryPath is the node of iface's providers or consumers:
// /<root>/<escaped interface>/<cat> (Dubbo's toCategoryPath).
func (r *Registry) categoryPath(iface, cat string) string {
	return r.p.root + "/" + escape(iface) + "/" + cat
}

// entry is u as the registry writes it (Dubbo's form): with interface and
// category, and side when u has none.
func entry(u spi.URL) spi.URL {
	cat := category(u)
	e := u.With(spi.KeyInterface, u.Interface()).With(KeyCategory, cat)
	if _, ok := u.Param(spi.KeySide); !ok {
		e = e.With(spi.KeySide, string(spi.Provider))
	}
	return e
}

// nodePath is u's node: its entry, encoded once, under its interface's
// category node (Dubbo's toUrlPath).
func (r *Registry) nodePath(u spi.URL) string {
	return r.categoryPath(u.Interface(), category(u)) + "/" + escape(fullString(entry(u)))
}

// fullString is u.String() with the commas, colons and slashes of its
// parameters (a methods list, addresses, paths) written as they are, as
// Dubbo's URL.toFullString writes them: the node name, u encoded once
// more (nodePath), then decodes in one step for a Dubbo reader such as
// Dubbo Admin ("methods%3DEcho%2CFail"), where the spi.URL form gave
// "methods%3DEcho%252CFail", one method named "Echo%2CFail" to such a
// reader (tester70). spi.Parse reads both forms alike; the other
// characters url.QueryEscape escapes ('&', '=', '+', '%', space...) stay
// escaped, so that a value holding them reads back the same.
func fullString(u spi.URL) string {
	s := u.String()
	i := strings.IndexByte(s, '?')
	if i < 0 {
		return s
	}
	return s[:i] + dubboQuery.Replace(s[i:])
}

var dubboQuery = strings.NewReplacer("%2C", ",", "%3A", ":", "%2F", "/")

// fromEntry is the provider URL an entry read under iface's providers
// node stands for: without category, and without interface when it is the
// URL's path (the registry added both). ok is false for an entry of
// another interface or category (Dubbo's isMatch checks both too).
func fromEntry(e spi.URL, iface string) (u spi.URL, ok bool) {
	if c, set := e.Param(KeyCategory); set && c != Providers || e.Interface() != iface {
		return e, false
	}
	u = e.Without(KeyCategory)
	if v, _ := u.Param(spi.KeyInterface); v == u.Path() {
		u = u.Without(spi.KeyInterface)
	}
	return u, true
}

// consumerOf returns the interface whose providers consumer takes and the
// matcher of its group and version. Errors name an empty interface and a
// malformed group or version (groupversion.Parse).
func consumerOf(consumer spi.URL) (string, groupversion.Matcher, error) {
	iface := consumer.Interface()
	if iface == "" {
		return "", groupversion.Matcher{}, fmt.Errorf("zookeeper registry: consumer URL %s names no interface (want airnode:///demo.Echo)", consumer.Redacted())
	}
	m, err := groupversion.ForConsumer(consumer)
	if err != nil {
		return "", groupversion.Matcher{}, fmt.Errorf("zookeeper registry: consumer URL %s: %w", consumer.Redacted(), err)
	}
	return iface, m, nil
}

// matching returns the providers of list that m accepts, as a new
// non-nil slice.
func matching(m groupversion.Matcher, list []spi.URL) []spi.URL {
	out := make([]spi.URL, 0, len(list))
	for _, u := range list {
		if m.Match(u) {
			out = append(out, u)
		}
	}
	return out
}

// isInterfaceName reports whether a node name under the root, decoded,
// can be an interface node: the nodes of the earlier airnode layout were
// named by service key (group/interface:version) and are not read.
func isInterfaceName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/:*")
}

// lastDialError returns ": last dial: ERR" for the last failed dial to a
// server (connection refused, timeout), or "" when the last dial worked.
func (r *Registry) lastDialError() string {
	if p := r.dialErr.Load(); p != nil {
		return ": last dial: " + (*p).Error()
	}
	return ""
}

// zkLogger sends zk's log lines to slog at debug level.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug("zookeeper: " + fmt.Sprintf(format, args...))
}

// connection returns the zk connection, opening it on first use.
func (r *Registry) connection() (*zk.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.conn != nil {
		return r.conn, nil
	}
	if err := r.openLocked(); err != nil {
		return nil, err
	}
	r.downSince = time.Now() // no session yet: first contact
	return r.conn, nil
}

// handle is one zk.Conn and what its event callback tells its session
// loop. A handle is replaced (redial) when its session is gone for good.
type handle struct {
	conn       *zk.Conn
	kick       chan struct{} // the zk event callback wakes the session loop
	lost       atomic.Bool   // the callback saw the session state leave HasSession
	stale      atomic.Bool   // replaced by a new handle: its events are ignored
	hadSession bool          // it has had a session (guarded by Registry.mu)
	heard      contactClock  // when its connections last received bytes
	granted    atomic.Int64  // ns: the session timeout the server last granted it; 0 before any
	refused    refusals      // connections in a row closed by the server at the handshake
	down       downClock     // when every server it dials was last seen down (connection refused)
}

// openLocked opens a new zk handle (a new session, from zxid 0), makes it
// the registry's and starts its session loop. zk.Connect dials in the
// background: it fails only on a malformed server list. Caller holds r.mu.
func (r *Registry) openLocked() error {
	h := &handle{kick: make(chan struct{}, 1)}
	h.refused.kick = func() {
		select {
		case h.kick <- struct{}{}:
		default:
		}
	}
	conn, events, err := zk.Connect(r.p.servers, r.p.sessionTimeout,
		zk.WithLogger(zkLogger{r.log}), zk.WithLogInfo(false),
		zk.WithDialer(dialer(handshakeLimit(r.p), &r.dialErr, &h.heard, &h.granted, &h.refused, &h.down)),
		zk.WithEventCallback(func(ev zk.Event) {
			if h.stale.Load() {
				return
			}
			if ev.Type == zk.EventSession && ev.State != zk.StateHasSession {
				h.lost.Store(true)
			}
			select {
			case h.kick <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		return fmt.Errorf("zookeeper registry: connect %v: %w", r.p.servers, err)
	}
	h.conn = conn
	r.conn, r.handle = conn, h
	if r.unlist == nil {
		r.paused.start()
		// airnode_registry_connected: read when scraped (r.up: a
		// session, the registry's own entries re-created on a new one)
		r.unlist = counters.RegistryConnections.Add("zookeeper://"+strings.Join(r.p.servers, ","), func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.up
		})
	}
	r.wg.Add(1)
	go r.sessionLoop(h, events)
	return nil
}

// current returns the registry's zk handle (after a redial, the new one).
func (r *Registry) current() *zk.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

// staleFor reports whether h's session is gone for good: h has had a
// session, lost it, and ZooKeeper could have counted its timeout for
// session.timeout (expiryClockLocked: since the last contact, or since
// every server was last seen down when that is later: a ZooKeeper that
// is down expires nobody, and one restarted with its data restores the
// session with a fresh timeout), so the server has expired it (or,
// restarted with empty data, refuses h, whose last zxid is higher
// than its own: "Refusing session request for client ... as it has seen
// zxid ..."; go-zookeeper would redial with that zxid forever), or
// every server of the list has refused it twice in a row (refusedLimit:
// the server closed the connection at the session handshake without a
// byte; the session loop then asks confirmRefusal whether the server
// serves at all before redialing), or once more after confirmRefusal
// found that server serving (a server still starting closes handshakes
// too, and may serve by the time it is asked), which a server restarted with empty data does at once: it does
// not know the session, so waiting session.timeout for it to expire
// only keeps the entries out (13-28 s of the default 30 s after a wipe).
// refused is how many connections in a row were refused. A session is
// not gone, whatever the time without contact, while the servers it
// reaches are not serving (confirmRefusal: loading their data, no
// quorum, a proxy to a ZooKeeper that is down): nobody can expire it
// then, and an ensemble that serves again resets every session's
// timeout (its new leader does), so the session is resumed, or the
// server says it expired. When session.timeout has passed and a server
// closed the handshake since the last answer, staleFor reports the
// refusals so that confirmRefusal asks first. Otherwise it returns how
// long to wait before asking again, 0 for no need.
func (r *Registry) staleFor(h *handle) (wait time.Duration, redial bool, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up || r.closed || r.handle != h || !h.hadSession || r.downSince.IsZero() {
		return 0, false, 0
	}
	if n := h.refused.refusedInARow(); n >= r.refusedLimit() || n > 0 && h.refused.servingSeen() {
		return 0, true, n
	}
	if h.refused.notServing() {
		return notServingRecheck, false, 0
	}
	if d := r.sessionTimeoutLocked() - r.expiryClockLocked(); d > 0 {
		return d, false, 0
	}
	if n := h.refused.refusedInARow(); n > 0 {
		return 0, true, n // a server closed the handshake: confirmRefusal first
	}
	return 0, true, 0
}

// notServingRecheck is how often a lost session held while ZooKeeper is
// not serving (refusals.notServing) is looked at again; a server that
// answers ends the hold at once (its handshake's answer is an event).
const notServingRecheck = time.Second

// refusedLimit is how many connections in a row closed at the handshake
// make a lost session gone for good (staleFor): two per server of the
// list, so that a lagging follower's refusal (an ensemble member that has
// not seen the client's zxid yet) sends go-zookeeper to the next server
// and does not count, and the pause go-zookeeper makes after each round
// of the list (one second) passes once. A server that is not serving
// (loading its data, no quorum, a proxy to a ZooKeeper that is down)
// closes connections the same way: confirmRefusal tells it apart.
func (r *Registry) refusedLimit() int { return 2 * len(r.p.servers) }

// confirmRefusal asks the server that closed h's last session request
// for a new session (probeNewSession): when it grants one, it serves.
// The first time since a server last answered h, that is all it shows:
// a server that was starting (listening, its data not loaded yet)
// closed h's requests and serves now, and h's session, which it may
// well restore, is tried again (refusals.servingSeen: go-zookeeper
// redials within a second). When a server closes h's request again
// after that, it refuses h's session while it serves, which is then gone for good (confirmed; seen says
// what the probe saw, for redial's Warn). When it does not grant one, the server
// serves nobody (loading its data, no quorum, a proxy in front of a
// ZooKeeper that is down): h keeps its session for as long as no
// server answers (staleFor: refusals.notServing), the refusals counted
// so far are forgotten, and that is logged at Info once until a server
// answers again. The probe waits at most handshakeLimit.
func (r *Registry) confirmRefusal(h *handle, refused int) (confirmed bool, seen string) {
	addr := h.refused.lastAddr()
	if addr == "" {
		return true, "no server answered"
	}
	granted, seen := probeNewSession(addr, handshakeLimit(r.p))
	if granted {
		if h.refused.serving.CompareAndSwap(false, true) {
			h.refused.reset() // ask the server, which serves now, for h's session again
			r.log.Debug("ZooKeeper closed this session's requests at the handshake, and "+seen+": it serves now; trying this session again",
				"server", addr, "refused", refused)
			return false, seen
		}
		return true, seen
	}
	h.refused.reset()
	if h.refused.told.CompareAndSwap(false, true) {
		r.mu.Lock()
		down, sid := r.sinceContactLocked(), r.session
		r.mu.Unlock()
		r.log.Info("ZooKeeper closes this session's requests at the handshake, and "+seen+": it is not serving (loading its data, no quorum, or a proxy in front of a ZooKeeper that is down), not refusing this session; keeping it while ZooKeeper is not serving, however long (nobody can expire it meanwhile: a server that serves again resumes it, or says it expired)",
			"server", addr, "refused", refused, "unheard_for", down.Round(time.Millisecond), "session", fmt.Sprintf("0x%x", sid))
	}
	return false, seen
}

// redial replaces h, whose session is gone for good (staleFor), by a new
// zk handle: a new session from zxid 0, on which checkSession re-creates
// the registry's entries and the subscriptions re-list and re-arm their
// watches (Curator's ConnectionState resets its ZooKeeper handle the same
// way once a connection has failed for longer than its timeouts). The
// lost session counts as expired. h is closed; its loop drains its events
// and ends. refused is how many connections in a row the servers closed
// at the handshake when that is why (0: no session for session.timeout).
func (r *Registry) redial(h *handle, refused int, seen string) {
	r.mu.Lock()
	if r.closed || r.handle != h {
		r.mu.Unlock()
		return
	}
	r.countExpiryLocked()
	down := r.sinceContactLocked()
	timeout := r.sessionTimeoutLocked() // h's, before the new handle replaces it
	h.stale.Store(true)
	if err := r.openLocked(); err != nil {
		h.stale.Store(false)
		r.mu.Unlock()
		r.log.Warn("cannot open a new session", "err", err)
		return
	}
	r.authed = false // auth belongs to the connection
	if refused > 0 {
		// A server that expired a session it knows answers the
		// handshake (session 0: go-zookeeper's StateExpired, and a new
		// session follows by itself); one that closes it without a
		// byte while it serves has not seen this client's last zxid
		// (tester89 #1: a Warn that said "it expired the session" by
		// the time since the last contact came after a restart with
		// the data kept, whose server had been starting).
		r.log.Warn("ZooKeeper refuses this session: its server closed the connection at the session handshake, also once it served, and "+seen+" (it has not seen this session's last zxid: restarted with empty data, or it lost its latest transactions; it does not know this session); opening a new session",
			"refused", refused, "unheard_for", down.Round(time.Millisecond), "session_timeout", timeout, "old_session", sessionText(r.session))
	} else {
		r.log.Warn("no session for session.timeout: the server has expired it, or refuses this client (restarted with empty data); opening a new session",
			"unheard_for", down.Round(time.Millisecond), "session_timeout", timeout, "old_session", sessionText(r.session))
	}
	r.sessionChangedLocked(SessionChange{State: SessionExpired, Unheard: down})
	r.mu.Unlock()
	h.conn.Close()
}

// sessionText is a session id as the log records give it, "0x1000a2b3c"
// (ZooKeeper's form), or "unknown" for 0, which no session has.
func sessionText(id int64) string {
	if id == 0 {
		return "unknown"
	}
	return fmt.Sprintf("0x%x", id)
}

// markLostLocked records that h's session is lost, now noticed:
// downSince is now, lastHeard h's last contact with ZooKeeper (at most
// now). Caller holds r.mu.
func (r *Registry) markLostLocked(h *handle) {
	now := time.Now()
	r.downSince, r.lastHeard = now, h.heard.at()
	if r.lastHeard.IsZero() || r.lastHeard.After(now) {
		r.lastHeard = now
	}
}

// sinceContactLocked is how long the lost session has not heard from
// ZooKeeper: since its last contact (lastHeard), or, when unknown, since
// the loss was noticed. ZooKeeper expires a session session.timeout after
// it last heard the client (rounded up to its tick), which is about when
// the client last heard it; go-zookeeper notices the loss only two thirds
// of the session timeout after that, so judging from the notice would say
// "expired" that much after the consumers dropped this provider (18 s
// late with session.timeout=30s). Caller holds r.mu.
func (r *Registry) sinceContactLocked() time.Duration {
	if !r.lastHeard.IsZero() {
		return time.Since(r.lastHeard)
	}
	return time.Since(r.downSince)
}

// expiryClockLocked is how long ZooKeeper may have counted the lost
// session's timeout: the time since its last contact
// (sinceContactLocked), or, when later, since every server was last
// seen down (handle.down: its connection refused, nothing listening).
// A ZooKeeper that is down expires no session, and one restarted with
// its data kept restores every session with a fresh timeout from its
// start, so a session that has not heard ZooKeeper for longer than its
// timeout because ZooKeeper was restarting is alive, and is resumed as
// soon as a connection reaches the server (tester89 #1: a 6 s restart
// 3 s after the last ping was judged an expiry of a 10 s session and
// the entries were re-created under a new one; a dead path, a dial that
// times out, keeps counting from the last contact: the server may serve
// others and expire the session). The staleness and the "session
// expired" Warn are judged by it. Caller holds r.mu.
func (r *Registry) expiryClockLocked() time.Duration {
	d := r.sinceContactLocked()
	if h := r.handle; h != nil {
		if at := h.down.at(); !at.IsZero() {
			d = min(d, time.Since(at))
		}
	}
	return d
}

// sessionTimeoutLocked is the session timeout of the registry's session,
// by which it judges the session expired: what ZooKeeper granted its zk
// handle (handle.granted, read from the server's handshake answer), or
// session.timeout as asked before a server has answered. The server
// bounds the timeout asked to its minSessionTimeout..maxSessionTimeout, 2
// to 20 x tickTime by default, and expires the session by the granted
// value: asking 1s of a server with tickTime=2000 gets 4s, and judging by
// 1s would say "expired" and open a new session during a 1-4 s loss of
// contact that the server forgives. Caller holds r.mu.
func (r *Registry) sessionTimeoutLocked() time.Duration {
	if r.handle != nil {
		if g := r.handle.granted.Load(); g > 0 {
			return time.Duration(g)
		}
	}
	return r.p.sessionTimeout
}

// SessionTimeout returns the session timeout ZooKeeper granted the
// registry's session: session.timeout bounded to the server's
// minSessionTimeout..maxSessionTimeout (2 to 20 x its tickTime by
// default; session.timeout=1s of a server with tickTime=2000 is granted
// 4s), or session.timeout as asked until a server has answered. The
// registry judges its session expired by it (the "session expired" Warn,
// Health, SessionExpiries, the new session) and logs it once at Info
// when it differs from session.timeout.
func (r *Registry) SessionTimeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionTimeoutLocked()
}

// countExpiryLocked counts the last session (r.session) in
// counters.Registry.SessionExpiries, once. Caller holds r.mu.
func (r *Registry) countExpiryLocked() {
	if r.session != 0 && r.counted != r.session {
		r.counted = r.session
		counters.Registry.SessionExpiries.Inc()
	}
}

// sessionLoop drains the event channel of h's zk handle (zk drops events
// when it is full) and reacts to session changes; once h's session is gone
// for good it replaces h (redial). It ends when zk closes the channel,
// which zk does after its own goroutines have finished.
func (r *Registry) sessionLoop(h *handle, events <-chan zk.Event) {
	defer r.wg.Done()
	var retry, expiry <-chan time.Time
	for {
		timer := false
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-h.kick:
		case <-retry:
		case <-expiry:
			expiry, timer = nil, true
		}
		if h.stale.Load() { // replaced: drain until zk closes the channel
			retry, expiry = nil, nil
			continue
		}
		if !timer {
			retry = nil
			if r.checkSession(h) {
				retry = time.After(retryDelay)
			}
		}
		d := r.checkExpired()
		if q := r.checkQueued(); q > 0 && (d <= 0 || q < d) {
			d = q
		}
		w, stale, refused := r.staleFor(h) // at every event: a refusal kicks
		var seen string
		if stale && refused > 0 {
			if stale, seen = r.confirmRefusal(h, refused); !stale {
				w, stale, refused = r.staleFor(h) // by session.timeout, as for a server that is down
			}
		}
		if stale {
			r.redial(h, refused, seen)
			retry, expiry = nil, nil
			continue
		}
		if expiry != nil { // a look is already due
			continue
		}
		if w > 0 && (d <= 0 || w < d) {
			d = w
		}
		if d > 0 {
			expiry = time.After(d)
		}
	}
}

// providerServices returns the sorted service keys of the registry's
// own provider entries; nil when it registered none (a consumer's
// registry). Called with r.mu held.
func (r *Registry) providerServices() []string {
	var keys []string
	for _, u := range r.registered {
		if category(u) == Providers && !slices.Contains(keys, u.ServiceKey()) {
			keys = append(keys, u.ServiceKey())
		}
	}
	slices.Sort(keys)
	return keys
}

// Health implements spi.RegistryHealth: an error, naming the services,
// from the "session expired: provider entries ... are not in ZooKeeper"
// Warn until a new session has re-created them (the Info "are in ZooKeeper
// again"), and while the session is up but some of the registry's own
// provider entries cannot be created (the "cannot create entry" and
// "cannot re-create it" Warns: a node deleted by someone else under a
// parent whose ACL no longer lets this client create, a quota): those
// are retried, and the error names them and the last failure until they
// are in place. Also, once ZooKeeper is known to be down (no session for
// connect.timeout: knownDown), while provider entries that Register
// queued for want of a session (check=false) have not been created yet:
// no consumer can find them, though Register returned nil; the error
// names their services, how long there has been no session and the last
// dial's error, and clears when a session has created them. nil
// otherwise, also during a disconnection shorter than session.timeout
// (the entries created are still there) and for a registry that
// registered no provider. `airnode serve` reports this text as a warning
// (/stats, airnode_health_warning) meanwhile. Never blocks on I/O.
func (r *Registry) Health() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entriesGone {
		return fmt.Errorf("zookeeper registry %s: session expired: provider entries of %s are not in ZooKeeper until a new session re-creates them",
			r.desc, strings.Join(r.providerServices(), ", "))
	}
	if !r.up {
		keys := r.queuedServicesLocked()
		switch {
		case len(keys) == 0:
		case r.downSince.IsZero(): // a session came: checkSession is creating them
			return fmt.Errorf("zookeeper registry %s: provider entries of %s are not in ZooKeeper yet: the new session is creating them",
				r.desc, strings.Join(keys, ", "))
		case r.knownDownLocked():
			return fmt.Errorf("zookeeper registry %s: provider entries of %s are not in ZooKeeper: queued, created when a session comes (check=false); no session for %v%s; consumers that reach ZooKeeper will not find this provider until then",
				r.desc, strings.Join(keys, ", "), time.Since(r.downSince).Round(time.Second), r.lastDialError())
		}
		return nil
	}
	var keys []string
	for k, u := range r.pending {
		if _, ok := r.registered[k]; ok && category(u) == Providers && !slices.Contains(keys, u.ServiceKey()) {
			keys = append(keys, u.ServiceKey())
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return fmt.Errorf("zookeeper registry %s: provider entries of %s are not in ZooKeeper: cannot create them: %v (retrying; consumers that do not list this provider yet will not find it)",
		r.desc, strings.Join(keys, ", "), r.pendingErr)
}

// queuedWarnEvery is how often, while provider entries that Register
// queued for want of a session (check=false) are not in ZooKeeper, the
// registry says so again at Warn (checkQueued), after Register's own
// "no session yet" Warn: a minute.
var queuedWarnEvery = time.Minute

// queuedEntry is an entry Register queued for want of a session.
type queuedEntry struct {
	u     spi.URL
	since time.Time // when Register queued it
	// sent: a create of it may have reached ZooKeeper (Register's create
	// failed as the connection was lost, or a session's createAll began
	// it); while false, no node of it was ever asked for, and Unregister
	// has nothing to remove.
	sent bool
}

// queue records that u, registered, waits for a session to be created
// (Health, checkQueued, Unregister), and wakes the session loop to pace
// its Warn. sent says that a create of u was sent and its answer lost
// (queuedEntry.sent).
func (r *Registry) queue(u spi.URL, sent bool) {
	r.mu.Lock()
	if _, ok := r.registered[u.String()]; ok {
		r.queued[u.String()] = queuedEntry{u: u, since: time.Now(), sent: sent}
		if category(u) == Providers {
			r.queuedSaid = time.Now() // Register's Warn follows
		}
	}
	h := r.handle
	r.mu.Unlock()
	if h != nil {
		select {
		case h.kick <- struct{}{}:
		default:
		}
	}
}

// queuedServicesLocked returns the sorted service keys of the provider
// entries Register queued that no session has created yet; nil when
// there are none. Caller holds r.mu.
func (r *Registry) queuedServicesLocked() []string {
	var keys []string
	for k, q := range r.queued {
		if _, ok := r.registered[k]; ok && category(q.u) == Providers && !slices.Contains(keys, q.u.ServiceKey()) {
			keys = append(keys, q.u.ServiceKey())
		}
	}
	slices.Sort(keys)
	return keys
}

// checkQueued says again at Warn, each queuedWarnEvery since the last
// such Warn, that provider entries Register queued for want of a session
// are not in ZooKeeper yet, naming their services, how long there has
// been no session and the last dial's error (Dubbo's check=false logs
// its failed registry retries until one succeeds). It returns how long
// to wait before looking again, 0 for no need.
func (r *Registry) checkQueued() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up || r.closed || r.downSince.IsZero() {
		return 0
	}
	keys := r.queuedServicesLocked()
	if len(keys) == 0 {
		return 0
	}
	if d := queuedWarnEvery - time.Since(r.queuedSaid); d > 0 {
		return d
	}
	r.queuedSaid = time.Now()
	r.log.Warn("still no session; provider entries of "+strings.Join(keys, ", ")+" are not in ZooKeeper: consumers that reach ZooKeeper do not find this provider",
		"services", keys, "no_session_for", time.Since(r.downSince).Round(time.Second),
		"last_dial_error", strings.TrimPrefix(r.lastDialError(), ": last dial: "))
	return queuedWarnEvery
}

// checkExpired says, once per outage, at Warn, that the registry's
// provider entries are gone from ZooKeeper, when a registry that has
// them lost its session and has heard nothing from ZooKeeper for
// session.timeout (sinceContactLocked; unheard_for counts from that last
// contact): the server expires a session it has not heard from for that
// long and deletes its ephemeral nodes, so the consumers drop this provider,
// though it runs (without this, only the consumer's "keeping last
// provider lists" was logged). It returns how long to wait before looking
// again, 0 for no need.
func (r *Registry) checkExpired() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up || r.closed || r.session == 0 || r.downSince.IsZero() || r.entriesGone {
		return 0
	}
	keys := r.providerServices()
	if len(keys) == 0 {
		return 0
	}
	down := r.sinceContactLocked()
	timeout := r.sessionTimeoutLocked()
	if d := timeout - r.expiryClockLocked(); d > 0 {
		if down >= timeout && !r.saidDown {
			r.saidDown = true
			r.log.Info("ZooKeeper is down (every server refuses connections): keeping this session, which nobody can expire meanwhile; a ZooKeeper restarted with its data resumes it with a fresh session.timeout, one restarted without refuses it and a new session re-creates the entries",
				"unheard_for", down.Round(time.Millisecond), "session_timeout", timeout, "session", fmt.Sprintf("0x%x", r.session))
		}
		if !r.saidDown {
			d = min(d, timeout-down) // the Info above is due then
		}
		return d
	}
	if h := r.handle; h != nil && (h.refused.notServing() || h.refused.refusedInARow() > 0) {
		// ZooKeeper is not serving (nobody expires the session), or a
		// server closed the handshake and confirmRefusal has not said
		// yet which it is: the session loop decides (staleFor).
		return notServingRecheck
	}
	r.entriesGone = true
	r.countExpiryLocked()
	r.log.Warn("session expired: provider entries of "+strings.Join(keys, ", ")+" are not in ZooKeeper until the session is back; consumers that reach ZooKeeper will drop this provider",
		"services", keys, "unheard_for", down.Round(time.Millisecond), "session_timeout", timeout)
	return 0
}

// warnLostLocked says at Warn that the session's connection is lost
// (markLostLocked has run), with what the registry keeps by what it
// holds: the last provider lists of its subscriptions (a consumer's),
// and its entries, which ZooKeeper keeps until it expires the session
// and a new session re-creates (a provider's); and, when the process
// itself did not run for a while since ZooKeeper was last heard
// (pauseClock: SIGSTOP, a frozen container, a starved CPU share), that
// it did not and for how long, the likely cause of the loss. Caller
// holds r.mu.
func (r *Registry) warnLostLocked(state zk.State) {
	msg := "connection lost"
	attrs := []any{"state", state.String(), "last_heard_ago", time.Since(r.lastHeard).Round(time.Millisecond)}
	if p := r.paused.pausedSince(r.lastHeard, time.Now()); p > 0 {
		if heard := time.Since(r.lastHeard); p <= heard {
			msg += fmt.Sprintf(": this process did not run for at least %v (stopped or starved) of the %v since ZooKeeper was last heard",
				p.Round(100*time.Millisecond), heard.Round(100*time.Millisecond))
		} else {
			// what ZooKeeper sent during the pause was read on resuming
			msg += fmt.Sprintf(": this process did not run for at least %v (stopped or starved) until just before ZooKeeper was last heard",
				p.Round(100*time.Millisecond))
		}
		attrs = append(attrs, "paused_for", p.Round(time.Millisecond))
	}
	if len(r.watches) > 0 {
		msg += "; keeping the last provider lists"
	}
	if len(r.registered) > 0 {
		msg += "; its entries stay in ZooKeeper until the session expires, and a new session re-creates them"
	}
	r.log.Warn(msg, attrs...)
}

// checkSession handles a state change: on a transition to a session it
// authenticates, re-creates the registry's own nodes and wakes every
// subscription for a full re-list. It reports whether some node could not
// be created and should be retried.
func (r *Registry) checkSession(h *handle) (retry bool) {
	conn := h.conn
	lost := h.lost.Swap(false)
	// The state first, then the id: go-zookeeper stores a new session's
	// id before its state, and zeroes it on expiry, so an id read after
	// StateHasSession is the session's or 0 when it has just expired,
	// which is no session (recording 0 as the session made a later
	// redial log old_session=0x0, tester90 #3a)
	hasSession := conn.State() == zk.StateHasSession
	id := conn.SessionID()
	hasSession = hasSession && id != 0
	r.mu.Lock()
	if r.handle != h { // replaced by redial
		r.mu.Unlock()
		return false
	}
	if hasSession {
		h.hadSession = true
	}
	if (lost || !hasSession) && r.up && !r.closed {
		r.markLostLocked(h)
		r.warnLostLocked(conn.State())
		r.sessionChangedLocked(SessionChange{State: SessionDisconnected, Unheard: time.Since(r.lastHeard)})
	}
	if lost {
		r.up = false
	}
	if !hasSession || r.closed {
		r.up = false
		if r.downSince.IsZero() { // lost again while re-creating entries
			r.markLostLocked(h)
		}
		r.mu.Unlock()
		return false
	}
	if r.up {
		// Pending entries stay pending until created (createAll), so
		// that Health does not read them as in place meanwhile.
		pending := make([]spi.URL, 0, len(r.pending))
		for k, u := range r.pending {
			if _, ok := r.registered[k]; ok {
				pending = append(pending, u)
			} else {
				delete(r.pending, k)
			}
		}
		r.mu.Unlock()
		if retry = r.createAll(conn, pending); !retry {
			r.entriesRecreated()
		}
		return retry
	}
	var unheard time.Duration // since ZooKeeper was last heard, when a session is back
	again := r.session != 0
	if again {
		// One line per recovery (the loss's Warn is one per loss), with
		// how long ZooKeeper was not heard, since the last bytes from it
		// (unheard_for: a black-holed link is noticed only two thirds of
		// session.timeout after that), and since the loss was noticed
		// (lost_for: a stopped ZooKeeper is noticed at once, so every
		// process of one outage says about the same), tester67 #5.
		var lost time.Duration
		if !r.downSince.IsZero() {
			unheard, lost = r.sinceContactLocked(), time.Since(r.downSince)
		}
		// ends=: call and bench, which show Warn only, show it too
		// (tester89 #2: their "connection lost" had no end)
		r.log.Info("connected again", "server", conn.Server(),
			"unheard_for", unheard.Round(time.Millisecond), "lost_for", lost.Round(time.Millisecond), spi.LogEnds, "connection lost")
	}
	if g := time.Duration(h.granted.Load()); g > 0 && g != r.p.sessionTimeout && g != r.saidGranted {
		r.saidGranted = g
		r.log.Info(fmt.Sprintf("ZooKeeper granted a session timeout of %v (asked %v; the server bounds it to 2-20 x its tickTime)", g, r.p.sessionTimeout),
			"granted", g, "asked", r.p.sessionTimeout)
	}
	newSession := id != r.session
	if newSession {
		if r.session != 0 {
			r.countExpiryLocked()
			// The incident's start (Warn) before the recovery's (Info),
			// never after it (tester72 #6): a "page on Warn" rule must
			// not fire on the line that says the outage is ending.
			if keys := r.providerServices(); len(keys) > 0 {
				r.entriesBack = true
				if !r.entriesGone { // the server said so before session.timeout passed here
					r.entriesGone = true
					r.log.Warn("session expired: provider entries of "+strings.Join(keys, ", ")+" are not in ZooKeeper until the session is back; consumers that reach ZooKeeper will drop this provider",
						"services", keys, "session_timeout", r.sessionTimeoutLocked())
				}
			}
			r.log.Info("new session; re-creating entries", "session", fmt.Sprintf("0x%x", id))
		}
		r.session = id
		r.sessionGen++
	}
	if again {
		r.sessionChangedLocked(SessionChange{State: SessionConnected, NewSession: newSession, Unheard: unheard})
	}
	needAuth := r.p.user != "" && !r.authed
	// A session is here: ZooKeeper is no longer known to be down, so a
	// Register from now on waits (up to connect.timeout) for the entries
	// to be re-created and then creates its own, instead of queueing it
	// behind a re-creation that has already listed the entries.
	r.gaveUp, r.downSince, r.lastHeard, r.saidDown = false, time.Time{}, time.Time{}, false
	r.mu.Unlock()

	if needAuth {
		if err := conn.AddAuth("digest", []byte(r.p.user+":"+r.p.password)); err != nil {
			r.log.Warn("digest auth failed", "err", err)
			return true
		}
		r.mu.Lock()
		r.authed = true
		r.mu.Unlock()
	}

	r.mu.Lock()
	urls := make([]spi.URL, 0, len(r.registered))
	for _, u := range r.registered {
		urls = append(urls, u)
	}
	gone := r.withdrawn
	r.withdrawn = map[string]spi.URL{}
	r.mu.Unlock()
	for _, u := range gone {
		if err := conn.Delete(r.nodePath(u), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			r.log.Warn("delete withdrawn entry", "url", u.String(), "err", err)
		}
	}
	retry = r.createAll(conn, urls)
	r.mu.Lock()
	if conn.State() == zk.StateHasSession && conn.SessionID() == id && !r.closed && r.handle == h {
		r.up, r.gaveUp, r.downSince, r.lastHeard = true, false, time.Time{}, time.Time{}
		close(r.upCh)
		r.upCh = make(chan struct{})
	}
	r.mu.Unlock()
	if !retry {
		r.entriesRecreated()
	}
	return retry
}

// entriesRecreated says, at Info, that the registry's provider entries
// are in ZooKeeper again, once a new session has re-created them
// (entriesBack) or the session checkExpired said was gone is back, and
// ends the outage its Warn spoke of.
func (r *Registry) entriesRecreated() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if (r.entriesBack || r.entriesGone) && r.up && len(r.pending) == 0 {
		keys := r.providerServices()
		r.log.Info("provider entries of "+strings.Join(keys, ", ")+" are in ZooKeeper again; consumers will list this provider again",
			"services", keys, "session", fmt.Sprintf("0x%x", r.session))
	}
	if r.up {
		r.entriesBack, r.entriesGone = false, false
	}
}

// createAll creates the nodes of urls that are still registered; those
// that fail are kept in pending for a retry, which it reports, and those
// created leave it. An entry Register queued for want of a session is
// said at Info once created, with how long it was queued (tester81 #5):
// the end of the Warns that said it was in no ZooKeeper.
func (r *Registry) createAll(conn *zk.Conn, urls []spi.URL) (retry bool) {
	for _, u := range urls {
		key := u.String()
		r.mu.Lock()
		_, still := r.registered[key]
		q, queued := r.queued[key]
		if queued { // from now on Unregister cannot tell that no node was made
			q.sent = true
			r.queued[key] = q
		}
		r.mu.Unlock()
		if !still { // unregistered meanwhile: Unregister has said what became of it
			continue
		}
		err := r.create(conn, u)
		if err == nil {
			r.mu.Lock()
			delete(r.pending, key)
			delete(r.queued, key)
			r.mu.Unlock()
			if queued {
				kind := "provider"
				if category(u) == Consumers {
					kind = "consumer"
				}
				waited := time.Since(q.since).Round(time.Millisecond)
				r.log.Info(fmt.Sprintf("queued %s entry of %s created in ZooKeeper after %v without a session (check=false)", kind, u.ServiceKey(), waited),
					"url", key, "service", u.ServiceKey(), "queued_for", waited, "session", fmt.Sprintf("0x%x", conn.SessionID()))
			}
			r.guard(conn, u)
		}
		if err == nil || r.isClosed() {
			continue
		}
		r.log.Warn("cannot create entry; retrying", "url", u.String(), "err", err)
		r.mu.Lock()
		r.pending[u.String()] = u
		r.pendingErr = err
		r.mu.Unlock()
		retry = true
	}
	return retry
}

// create makes u's ephemeral node and its persistent parents. An existing
// node of this session is fine; one left by another session (a previous
// incarnation whose session has not expired yet, or this registry's own
// session that it replaced after session.timeout without one, which a
// ZooKeeper restarted with its data restores) is replaced in one multi
// transaction (delete and create), so a watcher re-listing the children
// never sees the entry missing: consumers do not drop and re-add the
// provider (a delete then a create flapped every provider of a restarted
// ZooKeeper out of `registry watch` for a few milliseconds).
func (r *Registry) create(conn *zk.Conn, u spi.URL) error {
	path := r.nodePath(u)
	parent := r.categoryPath(u.Interface(), category(u))
	if err := r.ensurePath(conn, parent); err != nil {
		return err
	}
	data := []byte(fullString(entry(u)))
	for attempt := 0; ; attempt++ {
		_, err := conn.Create(path, data, zk.FlagEphemeral, r.acl)
		if err == nil {
			return nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zookeeper registry: create %s: %w", path, err)
		}
		_, stat, serr := conn.Get(path)
		if serr != nil {
			if errors.Is(serr, zk.ErrNoNode) && attempt < 3 {
				continue
			}
			return fmt.Errorf("zookeeper registry: create %s: %w", path, serr)
		}
		if stat.EphemeralOwner == conn.SessionID() || attempt >= 3 {
			return nil
		}
		_, err = conn.Multi(&zk.DeleteRequest{Path: path, Version: stat.Version},
			&zk.CreateRequest{Path: path, Data: data, Acl: r.acl, Flags: zk.FlagEphemeral})
		if err == nil {
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zookeeper registry: replace stale %s: %w", path, err)
		}
		// the stale node went or changed meanwhile: look again
	}
}

// ensurePath creates path and its ancestors as persistent nodes.
func (r *Registry) ensurePath(conn *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		p := path[:i]
		if _, err := conn.Create(p, nil, 0, r.acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("zookeeper registry: create %s: %w", p, err)
		}
	}
	return nil
}

// waitUp waits until a session is established, quit closes or limit passes
// (limit <= 0: no limit). It reports whether the session is up. A limit
// that passes is remembered (knownDown) until a session is up.
func (r *Registry) waitUp(quit <-chan struct{}, limit time.Duration) bool {
	return r.waitUpOr(quit, nil, limit)
}

// waitUpOr is waitUp that also returns, false, when kick receives (a
// kick is not a limit that passes: knownDown does not remember it).
func (r *Registry) waitUpOr(quit, kick <-chan struct{}, limit time.Duration) bool {
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	for {
		r.mu.Lock()
		up, ch, closed := r.up, r.upCh, r.closed
		r.mu.Unlock()
		if closed {
			return false
		}
		if up {
			return true
		}
		select {
		case <-ch:
		case <-quit:
			return false
		case <-kick:
			return false
		case <-timeout:
			r.mu.Lock()
			r.gaveUp = !r.up
			r.mu.Unlock()
			return false
		}
	}
}

// knownDown reports whether ZooKeeper is known to be unreachable: there is
// no session, and a wait for one already ran out or there has been none
// for connect.timeout (since the first contact, or since the session was
// lost).
func (r *Registry) knownDown() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.knownDownLocked()
}

func (r *Registry) knownDownLocked() bool {
	return !r.up && (r.gaveUp || !r.downSince.IsZero() && time.Since(r.downSince) >= r.p.connectTimeout)
}

// waitCtx waits for a session until ctx is done or connect.timeout has
// passed since there has been none (the first contact, or the loss of the
// session): a first contact waits connect.timeout, a call during a short
// disconnection what is left of it, and a call while ZooKeeper is known to
// be down (knownDown) not at all. It reports whether the session is up.
func (r *Registry) waitCtx(ctx context.Context) bool {
	return r.waitCtxOr(ctx, nil)
}

// waitCtxOr is waitCtx that also returns, false, when kick receives
// (waitUpOr).
func (r *Registry) waitCtxOr(ctx context.Context, kick <-chan struct{}) bool {
	r.mu.Lock()
	up, down := r.up, r.knownDownLocked()
	limit := r.p.connectTimeout
	if !r.downSince.IsZero() {
		limit -= time.Since(r.downSince)
	}
	r.mu.Unlock()
	switch {
	case up:
		return true
	case down || limit <= 0:
		r.mu.Lock()
		r.gaveUp = !r.up
		up = r.up
		r.mu.Unlock()
		return up
	}
	return r.waitUpOr(ctx.Done(), kick, limit)
}

// CacheNote describes an answer of Lookup or Services that came from
// file.cache because ZooKeeper was unreachable (Registry.FromCache).
type CacheNote struct {
	// Path is the file.cache path.
	Path string
	// Saved is when the list was read from ZooKeeper and saved, to within
	// a minute; for Services the oldest of the lists'. Zero when unknown
	// (a cache file written before saved times were kept).
	Saved time.Time
	// Servers are the ZooKeeper servers, "h1:2181,h2:2181".
	Servers string
	// Unreachable is how long there had been no session when the answer
	// was given: since the first contact, or since the session was lost.
	Unreachable time.Duration
}

// String says where the answer came from, for a person:
// "file.cache /p/cache.json, saved 2m10s ago; ZooKeeper 127.0.0.1:2181 unreachable for 12s".
func (n CacheNote) String() string {
	saved := "saved at an unknown time"
	if !n.Saved.IsZero() {
		saved = "saved " + time.Since(n.Saved).Round(time.Second).String() + " ago"
	}
	return fmt.Sprintf("%s %s, %s; ZooKeeper %s unreachable for %v", KeyFileCache, n.Path, saved, n.Servers, n.Unreachable.Round(100*time.Millisecond))
}

// FromCache reports whether the last Lookup of serviceKey (Services: "")
// was answered from file.cache because ZooKeeper was unreachable, and
// what that answer was (its age, how long ZooKeeper had been
// unreachable). A live answer clears it. Safe for concurrent use.
func (r *Registry) FromCache(serviceKey string) (CacheNote, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.notes[serviceKey]
	return n, ok
}

// answered records whether the answer for key came from file.cache (saved
// then) or, with live true, from ZooKeeper; it returns the note.
func (r *Registry) answered(key string, live bool, saved time.Time) CacheNote {
	r.mu.Lock()
	defer r.mu.Unlock()
	if live {
		delete(r.notes, key)
		return CacheNote{}
	}
	n := r.noteLocked(saved)
	r.notes[key] = n
	return n
}

// noteLocked describes an answer from file.cache saved at saved. Caller
// holds r.mu.
func (r *Registry) noteLocked(saved time.Time) CacheNote {
	n := CacheNote{Path: r.p.cache, Saved: saved, Servers: strings.Join(r.p.servers, ",")}
	if !r.downSince.IsZero() {
		n.Unreachable = time.Since(r.downSince)
	}
	return n
}

// downError is the error of a call that found no session and no cache
// entry (what names the missing entry, or is empty): it names the servers,
// how long ZooKeeper has been unreachable and the last dial's error, and
// wraps ctx's error when ctx ended the wait.
func (r *Registry) downError(ctx context.Context, what string) error {
	r.mu.Lock()
	since := r.downSince
	r.mu.Unlock()
	msg := "zookeeper registry: no session with " + strings.Join(r.p.servers, ",")
	if !since.IsZero() {
		msg += fmt.Sprintf(": unreachable for %v (since %s UTC; %s=%v)", time.Since(since).Round(100*time.Millisecond),
			since.UTC().Format("15:04:05"), KeyConnectTimeout, r.p.connectTimeout)
	}
	if what != "" {
		msg += "; " + what
	}
	msg += r.lastDialError()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return errors.New(msg)
}

// Unreachable returns, while the registry has no session, downError's
// text (the servers, for how long, connect.timeout and the last dial's
// error); "" while a session is up and after Close
// (spi.RegistryUnreachable). No I/O; never blocks.
func (r *Registry) Unreachable() string {
	r.mu.Lock()
	up, closed := r.up, r.closed
	r.mu.Unlock()
	if up || closed {
		return ""
	}
	return r.downError(context.Background(), "").Error()
}

// denied adds to err, when ZooKeeper refused it for the node's ACL
// (zk.ErrNoAuth, "not authenticated": the node has a digest ACL this
// client's credentials do not match), what to do: give the user and
// password of that ACL in the registry URL. Other errors are returned as
// they are.
func (r *Registry) denied(err error) error {
	if !errors.Is(err, zk.ErrNoAuth) {
		return err
	}
	if r.p.user == "" {
		return fmt.Errorf("%w: the node has an ACL (digest) and this registry URL gives no credentials; give the user and password of that ACL in the URL, as its user info before the host (USER:PASSWORD@host:2181 after zookeeper://; docs/security.md)", err)
	}
	return fmt.Errorf("%w: the node's ACL does not admit user %q with the password given; give the user and password of that ACL in the URL, as its user info before the host (USER:PASSWORD@host:2181 after zookeeper://; docs/security.md)", err, r.p.user)
}

// Register publishes u as an ephemeral node until Unregister or Close, and
// again after every new session. If no session can be established within
// ctx and connect.timeout, u stays queued and is published as soon as one
// is (Dubbo's failback), and Register returns nil after logging a warning,
// when the registry URL says check=false or u is not a provider's entry;
// a provider's Register with check=true (the default, Dubbo's registry
// check) returns an error instead, naming the servers, how long they have
// been unreachable, the last dial's error and check=false, and queues
// nothing. Other ZooKeeper errors (no auth, ...) are returned. Once a wait for a
// session has run out (here, in Lookup or in a subscription's first list)
// and no session has been up since, Register queues u and returns at once
// instead of waiting connect.timeout again: a consumer started from
// file.cache while ZooKeeper is down waits one connect.timeout in all, as
// Dubbo's check=false does not block on its consumer entry.
func (r *Registry) Register(ctx context.Context, u spi.URL) error {
	if u.Interface() == "" {
		return fmt.Errorf("zookeeper registry: URL %s names no interface (want airnode://host:port/demo.Echo)", u.Redacted())
	}
	conn, err := r.connection()
	if err != nil {
		return err
	}
	r.mu.Lock()
	key := u.String()
	_, dup := r.registered[key]
	r.registered[key] = u
	delete(r.withdrawn, key)
	r.mu.Unlock()
	if dup {
		return nil
	}
	if r.knownDown() || !r.waitCtx(ctx) {
		if r.p.check && category(u) == Providers {
			// Dubbo's registry check: fail rather than serve registered
			// nowhere; a consumer's entry is only informative (Dubbo
			// does not check it either).
			r.mu.Lock()
			delete(r.registered, key)
			r.mu.Unlock()
			return fmt.Errorf("%w; add %s=false to the registry URL to start anyway and register when ZooKeeper answers (Dubbo's registry check)",
				r.downError(ctx, "cannot register "+u.ServiceKey()), KeyCheck)
		}
		r.queue(u, false)
		r.log.Warn("no session yet; entry will be created when one is", "url", key, "last_dial_error", strings.TrimPrefix(r.lastDialError(), ": last dial: "))
		return nil
	}
	conn = r.current() // a redial may have replaced it during the wait
	if err := r.create(conn, u); err != nil {
		if conn.State() != zk.StateHasSession {
			r.queue(u, true)
			r.log.Warn("connection lost; entry will be created when a session is back", "url", key, "err", err)
			return nil
		}
		r.mu.Lock()
		delete(r.registered, key)
		r.mu.Unlock()
		return r.denied(err)
	}
	r.guard(conn, u)
	return nil
}

// Unregister deletes u's node; unknown URLs are a no-op. While ZooKeeper is
// unreachable the delete is queued (done if this session comes back), and
// for a provider's entry that ZooKeeper still lists Unregister returns an
// error matching spi.ErrNotWithdrawn: "zookeeper registry: could not
// unregister demo.Echo from zookeeper://h:2181/airnode: no session
// (unreachable for 3s); its entry stays listed until ZooKeeper expires
// this session, session.timeout (30s) after it last heard this process,
// counted from when ZooKeeper is back if it is down; deleted at once if
// the session comes back first" (tester67 #2). An entry Register queued
// for want of a session and no create of which was ever sent is only
// taken off the queue: nil, and an Info "its entry was never created in
// ZooKeeper" (tester81 #4); no node of it is in any session.
func (r *Registry) Unregister(ctx context.Context, u spi.URL) error {
	r.mu.Lock()
	key := u.String()
	_, ok := r.registered[key]
	q, queued := r.queued[key]
	delete(r.registered, key)
	delete(r.pending, key)
	delete(r.queued, key)
	conn, up := r.conn, r.up
	never := ok && queued && !q.sent // no node of it was ever asked for
	if ok && !up && !never {
		r.withdrawn[key] = u
	}
	r.mu.Unlock()
	if !ok {
		return nil
	}
	if never {
		// Queued for want of a session and never sent to ZooKeeper
		// (tester81 #4): taking it off the queue is all there is to do;
		// no session holds a node of it, nothing is left to expire.
		waited := time.Since(q.since).Round(time.Millisecond)
		r.log.Info("unregistered "+u.ServiceKey()+": its entry was never created in ZooKeeper (queued for want of a session); nothing to remove",
			"url", key, "service", u.ServiceKey(), "queued_for", waited)
		return nil
	}
	if !up {
		return r.notWithdrawn(u)
	}
	if err := conn.Delete(r.nodePath(u), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		if conn.State() != zk.StateHasSession {
			r.mu.Lock()
			r.withdrawn[key] = u
			r.mu.Unlock()
			return r.notWithdrawn(u)
		}
		return fmt.Errorf("zookeeper registry: unregister %s: %w", u, err)
	}
	return nil
}

// Listed implements spi.RegistryListing: false while u is queued for
// want of a session and no create of it was sent (queuedEntry.sent).
func (r *Registry) Listed(u spi.URL) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.queued[u.String()]
	return !ok || q.sent
}

// notWithdrawn is Unregister's error for u, whose delete is queued for
// want of a session: a *notWithdrawnError for a provider's entry that
// ZooKeeper still lists, nil for a consumer's entry (informative) or
// when the session has expired already (the server deleted the entry).
func (r *Registry) notWithdrawn(u spi.URL) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if category(u) != Providers || r.entriesGone {
		return nil
	}
	msg := fmt.Sprintf("zookeeper registry: could not unregister %s from %s: no session", u.ServiceKey(), r.desc)
	if d := time.Since(r.downSince); !r.downSince.IsZero() && d >= 100*time.Millisecond {
		msg += fmt.Sprintf(" (unreachable for %v)", d.Round(100*time.Millisecond))
	}
	msg += fmt.Sprintf("; its entry stays listed until ZooKeeper expires this session, %s (%v) after it last heard this process, counted from when ZooKeeper is back if it is down; deleted at once if the session comes back first",
		KeySessionTimeout, r.sessionTimeoutLocked())
	return &notWithdrawnError{msg: msg}
}

// notWithdrawnError is an Unregister that could not reach ZooKeeper; it
// matches spi.ErrNotWithdrawn.
type notWithdrawnError struct{ msg string }

func (e *notWithdrawnError) Error() string        { return e.msg }
func (e *notWithdrawnError) Is(target error) bool { return target == spi.ErrNotWithdrawn }

// Lookup returns the providers of consumer's interface whose group and
// version consumer accepts: one value, a list a,b or * (internal/groupversion,
// the directory's rule; Dubbo's UrlUtils.isMatch). Without a session
// it answers from the interface's file.cache list if there is one
// (FromCache(consumer.ServiceKey()) says so, with its age; logged at
// debug), else fails naming the servers and how long they have been
// unreachable. It waits for a session within ctx and connect.timeout on a
// first contact or a short disconnection, and not at all while ZooKeeper
// is known to be down (no session for connect.timeout). A consumer URL
// with no interface or a malformed group or version is an error.
func (r *Registry) Lookup(ctx context.Context, consumer spi.URL) ([]spi.URL, error) {
	iface, m, err := consumerOf(consumer)
	if err != nil {
		return nil, err
	}
	conn, err := r.connection()
	if err != nil {
		return nil, err
	}
	key := consumer.ServiceKey()
	if r.waitCtx(ctx) {
		conn = r.current() // a redial may have replaced it during the wait
		children, _, err := conn.Children(r.categoryPath(iface, Providers))
		switch {
		case err == nil:
			all, strs := r.decode(iface, children)
			all, strs = r.preferLive(conn, iface, all, strs)
			r.putCache(iface, strs)
			r.answered(key, true, time.Time{})
			return matching(m, all), nil
		case errors.Is(err, zk.ErrNoNode):
			r.putCache(iface, []string{})
			r.answered(key, true, time.Time{})
			return []spi.URL{}, nil
		case conn.State() == zk.StateHasSession:
			return nil, r.denied(fmt.Errorf("zookeeper registry: list %s: %w", r.categoryPath(iface, Providers), err))
		}
	}
	if all, saved, ok := r.cache.get(iface); ok {
		list := matching(m, all)
		n := r.answered(key, false, saved)
		r.log.Debug("no session; answering from file.cache", "service", key, "providers", len(list), "cache", n.String())
		return list, nil
	}
	what := ""
	if r.cache != nil {
		what = "no " + KeyFileCache + " entry for " + iface
	}
	return nil, r.downError(ctx, what)
}

// putCache records the providers of iface (all of its groups and
// versions; their canonical strings) in file.cache.
func (r *Registry) putCache(iface string, list []string) {
	if err := r.cache.put(iface, list, time.Now()); err != nil {
		r.log.Warn("write file.cache", "path", r.p.cache, "err", err)
	}
}

// Consumers returns the consumer entries registered for
// consumer.ServiceKey(): the children of its interface's consumers node
// whose URL (category consumers) has that service key, sorted; none when
// the node is missing. It needs a session (waited for as Lookup does):
// file.cache keeps no consumers, so without one it fails naming the
// servers and how long they have been unreachable. Registries do not
// need it: `airnode registry ls` counts consumers with it.
func (r *Registry) Consumers(ctx context.Context, consumer spi.URL) ([]spi.URL, error) {
	iface, _, err := consumerOf(consumer)
	if err != nil {
		return nil, err
	}
	all, err := r.ConsumersOfInterface(ctx, iface)
	if err != nil {
		return nil, err
	}
	key := consumer.ServiceKey()
	out := []spi.URL{}
	for _, u := range all {
		if u.ServiceKey() == key {
			out = append(out, u)
		}
	}
	return out, nil
}

// ConsumersOfInterface returns the consumer entries of every group and
// version of iface, sorted, in one read of its consumers node (Dubbo's
// layout keeps them all there): a tool counting the consumers of many
// service keys of one interface (`airnode registry ls`) reads the node
// once with it and splits the entries by service key, where Consumers
// would read all of them once per key. It needs a session as Consumers
// does.
func (r *Registry) ConsumersOfInterface(ctx context.Context, iface string) ([]spi.URL, error) {
	if !isInterfaceName(iface) {
		return nil, fmt.Errorf("zookeeper registry: consumers of %q: want an interface name (demo.Echo), without '/', ':' or '*'", iface)
	}
	conn, err := r.connection()
	if err != nil {
		return nil, err
	}
	if !r.waitCtx(ctx) {
		return nil, r.downError(ctx, "")
	}
	conn = r.current() // a redial may have replaced it during the wait
	path := r.categoryPath(iface, Consumers)
	children, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return []spi.URL{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("zookeeper registry: list %s: %w", path, err)
	}
	out := []spi.URL{}
	for _, c := range children {
		s, err := url.QueryUnescape(c)
		if err != nil {
			continue
		}
		e, err := spi.Parse(s)
		if err != nil || e.Interface() != iface || e.ParamOr(KeyCategory, Consumers) != Consumers {
			continue
		}
		out = append(out, e.Without(KeyCategory))
	}
	push.Sort(out)
	return out, nil
}

// Services lists the service keys (group/interface:version) with at least
// one provider, sorted, read from the providers' URLs under every
// interface node (nodes of the earlier airnode layout, named by service
// key, are not read). Without a session (waited for as Lookup does) it
// lists those of the providers file.cache holds (FromCache("") says so),
// else it fails naming the servers and how long they have been
// unreachable.
func (r *Registry) Services(ctx context.Context) ([]string, error) {
	conn, err := r.connection()
	if err != nil {
		return nil, err
	}
	if !r.waitCtx(ctx) {
		if keys, oldest, ok := r.cache.keys(); ok {
			sort.Strings(keys)
			n := r.answered("", false, oldest)
			r.log.Debug("no session; listing the services in file.cache", "services", len(keys), "cache", n.String())
			return keys, nil
		}
		what := ""
		if r.cache != nil {
			what = KeyFileCache + " holds no list"
		}
		return nil, r.downError(ctx, what)
	}
	r.answered("", true, time.Time{})
	conn = r.current() // a redial may have replaced it during the wait
	root := r.p.root
	if root == "" {
		root = "/"
	}
	children, _, err := conn.Children(root)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, r.denied(fmt.Errorf("zookeeper registry: list %s: %w", root, err))
	}
	seen := map[string]bool{}
	keys := []string{}
	for _, c := range children {
		iface, err := url.QueryUnescape(c)
		if err != nil || !isInterfaceName(iface) {
			continue
		}
		p, _, err := conn.Children(r.categoryPath(iface, Providers))
		if err != nil {
			continue
		}
		all, _ := r.decode(iface, p)
		for _, u := range all {
			if k := u.ServiceKey(); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Close deletes the registry's nodes, stops every subscription, closes the
// session and waits for every goroutine; idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.wg.Wait()
		return nil
	}
	r.closed = true
	r.paused.stop()
	if r.unlist != nil {
		r.unlist()
	}
	conn, up := r.conn, r.up
	urls := make([]spi.URL, 0, len(r.registered))
	for _, u := range r.registered {
		urls = append(urls, u)
	}
	r.registered = map[string]spi.URL{}
	r.queued = map[string]queuedEntry{}
	watches := make([]*watch, 0, len(r.watches))
	var subs []*subscription
	for _, w := range r.watches {
		watches = append(watches, w)
		for s := range w.subs {
			subs = append(subs, s)
		}
	}
	r.watches = map[string]*watch{}
	close(r.upCh) // wake waiters: they see closed
	r.upCh = make(chan struct{})
	r.mu.Unlock()
	for _, w := range watches {
		w.signal()
	}
	if conn != nil {
		if up {
			for _, u := range urls {
				_ = conn.Delete(r.nodePath(u), -1)
			}
		}
		conn.Close() // the session's ephemeral nodes go with it
	}
	for _, w := range watches {
		<-w.done
	}
	for _, s := range subs {
		s.pusher.Stop()
	}
	r.wg.Wait()
	return nil
}

func (r *Registry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

var (
	_ spi.RegistryBuilder     = Builder{}
	_ spi.RegistryReacher     = Builder{}
	_ spi.Registry            = (*Registry)(nil)
	_ spi.LoggerUser          = (*Registry)(nil)
	_ spi.OneShotRegistry     = (*Registry)(nil)
	_ spi.RegistryHealth      = (*Registry)(nil)
	_ spi.RegistryListing     = (*Registry)(nil)
	_ spi.RegistryUnreachable = (*Registry)(nil)
	_ spi.Subscription        = (*subscription)(nil)
)

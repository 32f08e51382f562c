package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Shutdown defaults.
const (
	// DefaultShutdownWait is how long Shutdown waits after unregistering, so
	// that consumers hear of it and stop picking this provider
	// ("shutdown.wait").
	DefaultShutdownWait = 2 * time.Second
	// DefaultShutdownTimeout is Shutdown's whole budget, counted from its
	// start: unregistering, the wait and the drain of in-flight calls,
	// the provider's and then the consumer's ("shutdown.timeout").
	DefaultShutdownTimeout = 10 * time.Second
)

// DefaultRegisterTimeout bounds a registry's Register of a provider
// entry when Export's ctx has no sooner deadline (serve's has none), as
// a consumer's Subscribe is bounded by the 10 s that call and bench
// give Refer: a registry that never answers fails Export, naming it, instead
// of hanging the node's start. A registry URL whose connect.timeout is
// longer gets that plus registerSlack, so that the registry's own wait
// for a session (ZooKeeper's) ends first and says why.
// WithRegisterTimeout sets another bound.
const DefaultRegisterTimeout = 10 * time.Second

// Node is one airnode runtime: it exports services (provider side) and
// refers to them (consumer side), with every extension taken from its
// catalogs. A Node is safe for concurrent use. Shutdown (or Close) stops
// everything it started, in a fixed order (see Shutdown), and waits for every
// goroutine it owns. The zero Node is not usable (its Export and Refer
// panic): make one with NewNode.
type Node struct {
	cat    *extension.Catalogs
	logger *slog.Logger // base with component=kernel: the kernel's own records
	base   *slog.Logger // WithLogger's: the components the kernel builds add their own component
	now    func() time.Time

	registryURL     spi.URL   // default registry for Export and Refer; zero: none
	health          Readiness // WithHealth's; nil: none
	shutdownWait    time.Duration
	shutdownWaitSet bool // WithShutdownWait was given: Shutdown waits even when nothing is registered
	shutdownTimeout time.Duration
	registerTimeout time.Duration // WithRegisterTimeout's; 0: none
	keySource       KeySource     // WithKeySource's; nil: every key is the URL's own

	pool connPool

	mu         sync.Mutex
	closed     bool
	closing    chan struct{}      // closed when Shutdown begins (with closed): the references' waits end
	servers    map[string]*server // by "transport|host:port" (requested and bound)
	exporters  []*Exporter
	references []*Reference
	registries map[string]spi.Registry // by registry URL string
	building   map[string]*regBuild    // registry Builds in progress, by registry URL string

	shutdownOnce sync.Once
	shutdownErr  error
	// draining holds, from the start of Shutdown, the exporters it
	// unregisters: the node's references keep their providers listed
	// until their servers have closed (holds).
	draining atomic.Pointer[[]*Exporter]
	// loopbackWarned holds the "registry URL|address" pairs
	// warnLoopbackPublished has logged, so that each is said once.
	loopbackWarned sync.Map
	// statsRelease: what the filter builders given ProviderStats returned
	// (providerstats.go), called at the end of Shutdown.
	statsRelease []func()
}

// holds reports whether provider, dropped by a registry push, is one of
// the node's own exporters that Shutdown unregistered and whose server
// still serves (same service key and address): the node's references
// keep it listed (directory.Hold), so that the calls the drain lets
// finish, and those other consumers send during shutdown.wait, can still
// call this node's other services. Dubbo calls such
// a service in-process (injvm); airnode has no in-process calls
// (typo.go), so the node keeps calling itself over loopback until it
// stops serving.
func (n *Node) holds(provider spi.URL) bool {
	es := n.draining.Load()
	if es == nil {
		return false
	}
	for _, e := range *es {
		if !e.srv.closed.Load() && !e.gone.Load() && e.key == provider.ServiceKey() && e.url.Address() == provider.Address() {
			return true
		}
	}
	return false
}

// Option configures a Node (behaviour only; data travels in URLs).
type Option func(*Node)

// WithLogger sets the node's logger (default slog.Default()). The kernel
// logs through it, and so do the extensions it builds that take a logger
// (spi.LoggerUser: the failsafe cluster, the accesslog filter), so that a
// process logs in one format.
func WithLogger(l *slog.Logger) Option { return func(n *Node) { n.logger = l } }

// useLogger gives x, just built, the node's logger when x takes one
// (spi.LoggerUser).
func (n *Node) useLogger(x any) {
	if u, ok := x.(spi.LoggerUser); ok {
		u.UseLogger(n.base) // it adds its own component
	}
}

// WithClock sets the clock used for provider timestamps (default time.Now).
func WithClock(now func() time.Time) Option { return func(n *Node) { n.now = now } }

// WithRegistry sets the registry that Export registers in and Refer
// subscribes to when no other is given (e.g. "zookeeper://127.0.0.1:2181",
// "file:///tmp/airnode", "memory://ns": shared only by the nodes built
// from one catalog set). The default is none: Export only listens and
// registers nowhere (nothing is written: the file registry is the
// airnode binary's default, not the library's), and Refer then needs the
// providers' host:port in its URL or a registryURL argument, else it
// fails "no registry and no provider address".
func WithRegistry(u spi.URL) Option { return func(n *Node) { n.registryURL = u } }

// Readiness is a node's readiness as its health probes report it
// (metrics.Health is one: /ready, /stats, airnode_ready), given to the
// node with WithHealth so that Shutdown marks it draining.
type Readiness interface {
	// MarkDraining makes the readiness "draining" (/ready: 503
	// "draining: reason"); a readiness already draining keeps the reason
	// it was given (serve's "SIGTERM received, shutting down"). Called
	// once, at the start of Shutdown; it must not block.
	MarkDraining(reason string)
}

// WithHealth attaches h to the node: Shutdown (and Close) begins by
// marking it draining ("shutting down"), before it unregisters anything
// or stops listening, so that a load balancer polling /ready stops
// sending first, as gRPC's health server goes NOT_SERVING on shutdown.
// Marking it starting and serving stays the program's (h.SetState).
func WithHealth(h Readiness) Option { return func(n *Node) { n.health = h } }

// WithShutdownWait sets how long Shutdown waits between unregistering and
// closing listeners (default DefaultShutdownWait). The exported URLs'
// "shutdown.wait", when set, overrides it (the largest one wins). The
// default wait applies only when an export is registered, with an entry
// its registry may list (spi.RegistryListing: not one only queued, as
// zookeeper's check=false does while there is no session); a wait given
// here or by the URL key applies in any case: without a registry it is
// the time a load balancer polling the node's readiness (WithHealth:
// /ready answers 503) or the health service (airnode.Health: NOT_SERVING)
// has to stop sending before the listeners close, as a Kubernetes
// readiness probe needs.
func WithShutdownWait(d time.Duration) Option {
	return func(n *Node) { n.shutdownWait, n.shutdownWaitSet = d, true }
}

// WithShutdownTimeout sets Shutdown's whole budget, counted from its
// start (default DefaultShutdownTimeout): unregistering and the wait
// (WithShutdownWait) take their part of it, and the in-flight calls,
// served and made, drain within what they leave; a wait as long as the
// budget leaves none, and the calls still running then are abandoned.
// serve's --shutdown-timeout is this budget, counted from the signal.
// The exported URLs' "shutdown.timeout", when set, overrides it (the
// largest one wins), with the same meaning; a reference's URL key does
// not (Refer warns of it): this is what bounds a consumer node's Close.
func WithShutdownTimeout(d time.Duration) Option { return func(n *Node) { n.shutdownTimeout = d } }

// WithRegisterTimeout sets the bound of a registry's Register of a
// provider entry when Export's ctx has no sooner deadline (default
// DefaultRegisterTimeout; a registry URL's longer connect.timeout plus
// 2 s wins). The registry gets a ctx ending then; one that ignores it is
// left running 1 s later and Export fails with a *LeftRunningError
// ("registry \"nureg\" Register of demo.Echo did not return within
// 10s; stopped waiting for it (it may still finish later)"). 0 or less: no bound but ctx's.
func WithRegisterTimeout(d time.Duration) Option { return func(n *Node) { n.registerTimeout = d } }

// WithOneShot marks the node a one-shot consumer: a program that makes
// its calls and exits (airnode call, airnode health), so that nothing is
// left to reconnect for once its calls are done. A channel to a provider
// that closes (the provider killed, shutting down, or closing the
// connection right after its answer) is then logged at Debug as
// "channel closed", not at Warn or Info as "channel
// closed; reconnecting", and the failed redials after it at Debug too:
// a call the close fails reports it itself (CHANNEL_INACTIVE), and a
// line promising a reconnect the program will not wait for misleads.
// The connections still redial as a long-lived node's do (a failover
// retry may use one). The node's registries that implement
// spi.OneShotRegistry are told too, right after their Build (zookeeper:
// the Dubbo Admin rules it does not apply in one line, not two).
// Default: off, a long-lived node (serve, bench).
func WithOneShot() Option { return func(n *Node) { n.pool.oneShot = true } }

// KeySource names where a URL key's value was written when not in the
// URL itself: for side (spi.Consumer at Refer, spi.Provider at Export),
// key ("timeout") and value ("5") as the URL holds them, the environment
// variable that set it ("AIRNODE_CONSUMER_TIMEOUT"), or "" when the URL's
// own. config.Config.EnvSource is one.
type KeySource func(side spi.Side, key, value string) string

// WithKeySource makes the node's warnings about a key's value name where
// the user wrote it: a bare number for a duration, timeout=5 from
// AIRNODE_CONSUMER_TIMEOUT=5, is warned of as
// "AIRNODE_CONSUMER_TIMEOUT=5 is 5ms (...); write 5s for seconds", not
// "timeout=5 ...", which names a key the user never typed. f is called
// at Refer and Export (ReferWarnings too), only for a key warned of,
// never per call; it must not block. Default: none, the key's name.
func WithKeySource(f KeySource) Option { return func(n *Node) { n.keySource = f } }

// writtenAs is key as the user wrote it on side: the variable
// WithKeySource's f names for key=value, else key.
func (n *Node) writtenAs(side spi.Side, key, value string) string {
	if n.keySource != nil {
		if name := n.keySource(side, key, value); name != "" {
			return name
		}
	}
	return key
}

// NewNode returns a node using the extensions in cat. It starts nothing;
// it gives its ProviderStats and ReferenceKeys to the filter builders
// that take them (spi.ProviderStatsUser, spi.ReferencesUser: the metrics
// filter's per-provider and per-reference series).
// cat is usually bundle.Catalogs() (every bundled extension), or
// extension.New() with the extensions wanted registered in it. NewNode
// panics, naming what is missing, when cat is nil or lacks a point's
// catalog (a zero extension.Catalogs{}, not made by extension.New): a
// node without them could do nothing but panic later.
func NewNode(cat *extension.Catalogs, opts ...Option) *Node {
	if err := checkCatalogs(cat); err != nil {
		panic(err)
	}
	n := &Node{
		cat: cat, logger: slog.Default(), now: time.Now,
		shutdownWait: DefaultShutdownWait, shutdownTimeout: DefaultShutdownTimeout, registerTimeout: DefaultRegisterTimeout,
		servers: map[string]*server{}, registries: map[string]spi.Registry{},
		closing: make(chan struct{}),
	}
	for _, o := range opts {
		o(n)
	}
	if n.logger == nil {
		n.logger = slog.Default()
	}
	n.base = n.logger
	n.logger = n.base.With("component", "kernel")
	n.useProviderStats()
	return n
}

// checkCatalogs returns NewNode's panic value for catalogs it cannot use.
func checkCatalogs(cat *extension.Catalogs) error {
	const use = "use bundle.Catalogs() (every bundled extension) or extension.New() with the extensions registered in it"
	if cat == nil {
		return errors.New("kernel.NewNode: catalogs is nil: " + use)
	}
	var missing []string
	for _, p := range []struct {
		name string
		nil  bool
	}{
		{"Transport", cat.Transport == nil}, {"Registry", cat.Registry == nil}, {"LoadBalance", cat.LoadBalance == nil},
		{"Codec", cat.Codec == nil}, {"Heartbeat", cat.Heartbeat == nil}, {"Cluster", cat.Cluster == nil}, {"Filter", cat.Filter == nil},
	} {
		if p.nil {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("kernel.NewNode: catalogs has no %s catalog (an extension.Catalogs not made by extension.New): %s", strings.Join(missing, ", "), use)
	}
	return nil
}

// Catalogs returns the node's catalogs.
func (n *Node) Catalogs() *extension.Catalogs { return n.cat }

var errClosed = errors.New("kernel: node is shut down")

// AbandonedError is part of Shutdown's error when the drain of in-flight
// calls ran out of time (shutdown.timeout, or ctx): Calls calls were still
// running. Their contexts were cancelled and their consumers answered
// SERVER_ERROR ("provider ... shut down"), as far as the calls returned
// within a short grace. A method still running that ignores its context
// is not waited for (Shutdown). Match it with errors.As.
//
// When the caller's ctx ended the drain (ContextEnded), Ctx holds its
// error and Unwrap returns it (and Cause), so that errors.Is(err,
// context.DeadlineExceeded), or context.Canceled, holds, as for a Refer
// or Export the caller's ctx ended (LeftRunningError); when
// shutdown.timeout, the kernel's own bound, ended it, neither matches.
type AbandonedError struct {
	Calls int // calls still in flight when the drain ended
	// Which names the abandoned calls whose consumers were answered
	// (SERVER_ERROR "shut down"), counted per method and consumer, in the
	// order first seen: {"demo.Echo.Sleep from 127.0.0.1:50212", 8}. A
	// server names at most 8 methods and consumers, a further one's
	// calls are counted in Calls only; so is a call that ignored its
	// cancelled context past the 200 ms grace. The counts add up to at
	// most Calls.
	Which   []AbandonedCalls
	Timeout time.Duration // the drain budget: shutdown.timeout
	// ContextEnded is true when Shutdown's ctx ended the drain before
	// Timeout passed.
	ContextEnded bool
	// Ctx is the error of Shutdown's ctx (context.DeadlineExceeded or
	// context.Canceled) when it ended the drain; nil otherwise.
	Ctx error
	// Cause is context.Cause of Shutdown's ctx when it is not Ctx
	// (context.WithTimeoutCause, WithCancelCause); nil otherwise.
	Cause error

	elapsed time.Duration // from Shutdown's start to the caller's deadline; 0: unknown or cancelled
}

// AbandonedCalls counts the abandoned calls of one method from one
// consumer (AbandonedError.Which).
type AbandonedCalls struct {
	// Call is the method and, when known, the consumer's address:
	// "demo.Echo.Sleep from 127.0.0.1:50212", or "demo.Echo.Sleep".
	Call string
	// Count is how many such calls were answered SERVER_ERROR "shut
	// down"; at least 1.
	Count int
}

// String says "demo.Echo.Sleep from 127.0.0.1:50212" for one call, and
// "demo.Echo.Sleep from 127.0.0.1:50212 x8" for 8.
func (c AbandonedCalls) String() string {
	if c.Count == 1 {
		return c.Call
	}
	return fmt.Sprintf("%s x%d", c.Call, c.Count)
}

// Error says "kernel: shutdown timeout 1s exceeded: 1 call still in
// flight was abandoned", or, when the caller's ctx ended the drain first
// (Ctx), as Refer says it: "kernel: shutdown: 1 call in flight did not
// return before the caller's context deadline passed, after 300ms (its
// shutdown timeout is 10s): it was abandoned" (" (cause: ...)" after the
// deadline for a ctx with a cause; "before the caller's context was
// cancelled" for a cancelled one). An AbandonedError made with
// ContextEnded but no Ctx says "kernel: shutdown's context ended before
// its timeout 10s: ...".
func (e *AbandonedError) Error() string {
	if e.ContextEnded && e.Ctx != nil {
		they := "they were"
		if e.Calls == 1 {
			they = "it was"
		}
		end := callerEnd{Ctx: e.Ctx, Cause: e.Cause, elapsed: e.elapsed}
		return fmt.Sprintf("kernel: shutdown: %s did not return before %s (its shutdown timeout is %v): %s abandoned",
			inFlightCalls(e.Calls), end.did(), e.Timeout, they)
	}
	if e.ContextEnded {
		return fmt.Sprintf("kernel: shutdown's context ended before its timeout %v: %s", e.Timeout, abandonedCalls(e.Calls))
	}
	return fmt.Sprintf("kernel: shutdown timeout %v exceeded: %s", e.Timeout, abandonedCalls(e.Calls))
}

// Unwrap returns Ctx and Cause, those that are set.
func (e *AbandonedError) Unwrap() []error {
	return callerEnd{Ctx: e.Ctx, Cause: e.Cause}.errs()
}

// errDrainTimeout is the cause of Shutdown's drain context when
// shutdown.timeout, not the caller's ctx, ended it.
var errDrainTimeout = errors.New("kernel: shutdown timeout passed")

// connections says "1 connection" or "n connections".
func connections(n int) string {
	if n == 1 {
		return "1 connection"
	}
	return fmt.Sprintf("%d connections", n)
}

// inFlightCalls says "1 call in flight" or "n calls in flight".
func inFlightCalls(n int) string {
	if n == 1 {
		return "1 call in flight"
	}
	return fmt.Sprintf("%d calls in flight", n)
}

// abandonedCalls says "1 call still in flight was abandoned" or "n calls
// still in flight were abandoned".
func abandonedCalls(n int) string {
	if n == 1 {
		return "1 call still in flight was abandoned"
	}
	return fmt.Sprintf("%d calls still in flight were abandoned", n)
}

// Summary says how many calls were abandoned, without the timeout, for a
// caller that words the budget its own way ("3 calls still in flight were
// abandoned").
func (e *AbandonedError) Summary() string { return abandonedCalls(e.Calls) }

// registry returns the node's registry for u, building it on first use.
// Registries live until Shutdown. The registry's Build runs on a
// goroutine of its own, without the node's lock (a
// Build that blocks must hold up neither Shutdown nor the node's other
// Exports and Refers), and the caller waits for it until ctx's end
// (within: a *LeftRunningError, op naming the caller's operation, step
// `registry "x" Build`). One Build runs per registry URL at a time:
// callers that need the same registry while it is being built wait for
// that Build, each until its own ctx's end (regBuild). A Build that
// returns after every caller stopped waiting still makes the node's
// registry for u, for the next caller, unless the node has shut down
// meanwhile: then it is closed, on the Build's goroutine.
func (n *Node) registry(ctx context.Context, op string, u spi.URL) (spi.Registry, error) {
	key := u.String()
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, errClosed
	}
	if r, ok := n.registries[key]; ok {
		n.mu.Unlock()
		return r, nil
	}
	b, err := n.cat.Registry.Get(u.Scheme())
	if err != nil {
		n.mu.Unlock()
		return nil, fmt.Errorf("kernel: registry %s: %w", u.Redacted(), err)
	}
	rb, ok := n.building[key]
	if !ok {
		if n.building == nil {
			n.building = map[string]*regBuild{}
		}
		rb = &regBuild{done: make(chan struct{})}
		n.building[key] = rb
		go n.buildRegistry(key, u, b, rb)
	}
	n.mu.Unlock()
	step := fmt.Sprintf("registry %q Build", b.Name())
	if err := n.within(ctx, op, step, func() error { <-rb.done; return rb.err }); err != nil {
		var left *LeftRunningError
		if errors.As(err, &left) {
			return nil, err
		}
		return nil, fmt.Errorf("kernel: registry %s: %w", u.Redacted(), err)
	}
	return rb.r, nil
}

// regBuild is one registry Build in progress (Node.building): r and err
// are set before done closes.
type regBuild struct {
	done chan struct{}
	r    spi.Registry
	err  error
}

// buildRegistry builds the registry of u (key) with b, unlocked (a panic
// becomes an *extension.PanicError), then makes it the node's registry
// for key and ends rb. When the node has shut down meanwhile, or another
// registry for key is already there, the one built is closed here and
// rb ends with errClosed, or with the one already there.
func (n *Node) buildRegistry(key string, u spi.URL, b spi.RegistryBuilder, rb *regBuild) {
	r, err := extension.Build(extension.PointRegistry, b.Name(), func() (spi.Registry, error) { return b.Build(u) })
	var discard spi.Registry
	n.mu.Lock()
	delete(n.building, key)
	switch {
	case err != nil:
	case n.closed:
		discard, err = r, errClosed
		r = nil
	default:
		if old, ok := n.registries[key]; ok {
			discard, r = r, old
		} else {
			n.useLogger(r)
			if o, ok := r.(spi.OneShotRegistry); ok && n.pool.oneShot {
				o.UseOneShot() // before Subscribe: its notices in a one-shot's form
			}
			n.registries[key] = r
		}
	}
	rb.r, rb.err = r, err
	close(rb.done)
	n.mu.Unlock()
	if discard != nil {
		if cerr := discard.Close(); cerr != nil {
			n.logger.Warn("closing a registry built after it was no longer needed", "registry", u.Redacted(), "err", cerr)
		}
	}
}

// Shutdown stops the node in this order: mark its health draining
// (WithHealth); unregister every exported service (a registry that
// cannot reach its backend, spi.ErrNotWithdrawn, is logged at Warn,
// naming the service, and does not fail Shutdown); wait shutdown.wait so that consumers stop picking this
// provider (when something was registered or the wait was given,
// WithShutdownWait or the URL key; the node's own references
// keep listing its own providers until their servers have closed, so a
// method that calls another service of the same node, during the wait or
// the drain, still reaches it); stop accepting and drain
// in-flight calls until shutdown.timeout has passed since Shutdown began
// (the whole budget: unregistering and the wait count in it); close the
// servers' channels; close
// every reference, whose calls in flight (the consumer side) are answered
// before their channels close, as with Reference.Close, within what is
// left of the same shutdown.timeout, the node's (WithShutdownTimeout or
// its exports' URL key; a reference's URL key has no effect, Refer warns
// of it), which so bounds a consumer-only node's Shutdown too (the calls
// still unanswered then fail
// CHANNEL_INACTIVE "... closed: consumer shut down: its calls in flight
// were not answered within its shutdown timeout 10s", with
// spi.ErrRequestSent); close the registries. ctx bounds the whole
// sequence. Calls still running when the drain ends are abandoned
// (answered SERVER_ERROR when they return in time; the go-away goes out
// first, so a request read from then on is not run, and the consumer
// reads the answer as spi.ErrProviderShutdown: its failover asks another
// provider, never this one) and the error includes
// an *AbandonedError counting them. When ctx's end, not
// shutdown.timeout, ended the drain, that error, the consumer side's
// (its calls in flight failed CHANNEL_INACTIVE) and the connections left
// closing (a *LeftRunningError) match ctx's error (errors.Is(err,
// context.DeadlineExceeded), context.Canceled, ctx's cause) and say "did
// not return before the caller's context deadline passed, after 300ms",
// as Refer's do; shutdown.timeout's match neither. Shutdown
// does not wait for an abandoned call whose method ignores its cancelled
// context: 0.5 s after the drain's end (200 ms for the abandoned calls to
// answer, 200 ms more for the exchange's abandoned requests, 100 ms for
// the channels' goroutines; 0.6 s with dispatcher=direct, whose reader,
// running the method, cannot read the answer to the go-away's ping: 100
// ms more) it closes the listeners and connections and returns, leaving
// that method's goroutine running until it returns (the goroutine is the
// method's; its answer is dropped): no other goroutine of the node waits
// for it, and the provider's idle workers end as the connections close
// (not at the worker pool's idle ticks, 2 to 4 s later), so
// goleak.VerifyNone after Shutdown sees only the method's. So
// Shutdown returns within shutdown.timeout + 0.5 s (0.6 s with
// dispatcher=direct), or ctx's end + the same, whatever the methods do:
// measured 0.50 s and 0.60 s (TestShutdownDoesNotWaitForAMethodIgnoringItsContext).
//
// The same holds whatever the extensions do: every extension call
// Shutdown waits on (a registry's
// Unregister or Close, a listener's Close or Accept, a transport's Dial
// that ignores its ctx, a session's Close, a heartbeat's stop) is waited
// for until ctx's end; the calls Shutdown starts after ctx's end share
// one late window of 50 ms in all (then 20 ms each, for 50 ms more at
// most), however many there are; a server's connections get its own
// shutdown's 0.5 s past the drain's end. Each call still running then is
// left running on its own goroutine, and the error, logged at Warn,
// includes a *LeftRunningError naming the step and the extension
// ("kernel: shutdown: registry \"mapreg\" Close did not return within
// 1s; stopped waiting for it (it may still finish later)", `transport "trap" session Close (the connection
// from A to B)`, `heartbeat "pinger" stop (...)`). So with stuck
// extensions Shutdown returns within ctx's end + about 0.5 s; the bound
// that holds whatever they do is ctx's end + 1.1 s (1 s past the drain's
// end for a server's shutdown, as a last resort, plus the late window).
// A panic in one of those calls fails that step, with a *StepPanicError
// or an *extension.PanicError, and is logged at Error with its stack:
// the process lives. Every such failure is in the error, joined (two
// Unregisters that panicked give two). A call that returned having
// failed is not waited for as one left running: a session Close that
// panicked or returned an error ends the wait for its connection at once
// (100 ms for its goroutines at most, then the connection is given up:
// its net.Conn closed when the session gives one, NetConn() net.Conn,
// else left open, as the error says: "... session Close (the connection
// from A to B) failed: ...; the connection was given up and left open"),
// and a listener Close that panicked fails that step at once, without
// waiting for the accept loop beyond 50 ms. A call still
// blocked is named for what it is: `transport "x" session Open (the
// connection to B)`, `heartbeat "x" Watch (...)`, `transport "x"
// session Accept (the connection from A to B)`. With a ctx that never
// ends (Close), Shutdown waits for them. Shutdown is idempotent: later
// calls return the first call's
// result.
func (n *Node) Shutdown(ctx context.Context) error {
	n.shutdownOnce.Do(func() { n.shutdownErr = n.shutdown(ctx) })
	return n.shutdownErr
}

// Close is Shutdown with no deadline beyond the node's own: its shutdown
// timeout (WithShutdownTimeout, default DefaultShutdownTimeout, 10s; the
// largest "shutdown.timeout" of its exports when one sets it), counted
// from Close's start. For a consumer node too, it is that timeout, and
// never a reference's (Refer warns that a reference's "shutdown.timeout"
// has no effect), that bounds how long Close waits for the calls in
// flight of all its references to be answered; those still unanswered
// then fail CHANNEL_INACTIVE "consumer shut down: its calls in flight were
// not answered within its shutdown timeout 10s" (spi.ErrRequestSent), and
// the error says how many. To wait less, give the node a shorter
// WithShutdownTimeout, or call Shutdown with a ctx that ends sooner: an
// ended ctx cuts them at once, as gRPC's ClientConn.Close does.
func (n *Node) Close() error { return n.Shutdown(context.Background()) }

// ShutdownWait returns how long Shutdown, called now, would wait between
// unregistering and closing the listeners: the largest "shutdown.wait" of
// the exported URLs when any sets one, else the node's
// (WithShutdownWait, default DefaultShutdownWait); 0 when no export is
// registered and neither gave a wait (no consumer would learn of the
// shutdown from a registry)
// or the node is shut down.
func (n *Node) ShutdownWait() time.Duration {
	n.mu.Lock()
	exporters := n.exporters
	n.mu.Unlock()
	wait, _, waits := n.shutdownTiming(exporters)
	if !waits {
		return 0
	}
	return wait
}

// shutdownTiming returns Shutdown's wait and whole budget for exporters:
// the node's (WithShutdownWait, WithShutdownTimeout), each replaced by
// the largest value the exported URLs give ("shutdown.wait",
// "shutdown.timeout"; a value that does not parse is ignored), and
// whether Shutdown waits: when any of exporters is registered, or the
// wait was given (WithShutdownWait, an export's "shutdown.wait") and
// something is exported.
func (n *Node) shutdownTiming(exporters []*Exporter) (wait, timeout time.Duration, waits bool) {
	wait, timeout = n.shutdownWait, n.shutdownTimeout
	var urlWait, urlTimeout time.Duration = -1, -1
	for _, e := range exporters {
		if d, err := e.url.Duration("shutdown.wait", -1); err == nil && d > urlWait {
			urlWait = d
		}
		if d, err := e.url.Duration("shutdown.timeout", -1); err == nil && d > urlTimeout {
			urlTimeout = d
		}
	}
	if urlWait >= 0 {
		wait = urlWait
	}
	if urlTimeout >= 0 {
		timeout = urlTimeout
	}
	return wait, timeout, anyRegistered(exporters) || n.shutdownWaitSet && len(exporters) > 0 || urlWait >= 0
}

// anyRegistered reports whether any of exporters is registered with an
// entry its registry may list: one it only queued, never sent to its
// backend (spi.RegistryListing), no consumer can have listed, so no
// consumer needs the default wait to learn that it is gone (tester81 #4).
func anyRegistered(exporters []*Exporter) bool {
	return slices.ContainsFunc(exporters, func(e *Exporter) bool {
		if e.reg == nil {
			return false
		}
		l, ok := e.reg.(spi.RegistryListing)
		return !ok || l.Listed(e.url)
	})
}

func (n *Node) shutdown(ctx context.Context) error {
	began := time.Now()
	if n.health != nil {
		n.health.MarkDraining("shutting down") // first: /ready answers 503 before anything is unregistered
	}
	ctx = withLateWindow(ctx)
	n.mu.Lock()
	n.closed = true
	close(n.closing)
	exporters := n.exporters
	n.exporters = nil
	refs := n.references
	n.references = nil
	servers := map[*server]bool{}
	for _, s := range n.servers {
		servers[s] = true
	}
	n.servers = map[string]*server{}
	regs := n.registries
	n.registries = map[string]spi.Registry{}
	n.mu.Unlock()

	// Before unregistering: the node's own references keep listing its
	// providers until their servers close.
	n.draining.Store(&exporters)
	var errs []error
	wait, timeout, waits := n.shutdownTiming(exporters)
	if waits && (wait > 0 || anyRegistered(exporters)) {
		// Tell the consumers that the provider drains (exchange's
		// draining event), so that a registry consumer's empty
		// protection or removal damping does not keep sending to it
		// through the wait. Before the unregisters, not
		// after: a registry whose Unregister returns once its
		// subscribers applied the new list (memory) would otherwise have
		// them keep it first, then drop it on their next check.
		for s := range servers {
			s.srv.AnnounceDraining()
		}
	}
	// Concurrently: a registry whose Unregister blocks holds each
	// service until the same ctx's end (and late window), not one after
	// another.
	// shutdown.timeout is the whole budget, from Shutdown's start (as
	// serve's --shutdown-timeout counts from the signal): the unregisters
	// and the wait take their part, the drain gets what they leave.
	dctx, cancel := context.WithDeadlineCause(ctx, began.Add(timeout), errDrainTimeout)
	defer cancel()
	var (
		keptMu sync.Mutex
		kept   []string // services whose entry the registry could not withdraw, or withdraws late
	)
	errs = append(errs, eachConcurrently(exporters, func(e *Exporter) error {
		err := e.unregister(ctx, "shutdown")
		if err == nil {
			return nil
		}
		keptMu.Lock()
		kept = append(kept, e.key)
		keptMu.Unlock()
		if errors.Is(err, spi.ErrNotWithdrawn) {
			// The registry could not reach its backend (ZooKeeper
			// down): the entry stays listed until the backend drops
			// it; nothing more this node can do, so not a failure of
			// the shutdown (Dubbo's FailbackRegistry logs it too).
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // the registry's words, without "kernel: unregister demo.Echo"
			}
			n.logger.Warn("shutdown: "+err.Error(), "service", e.key, "registry", e.regName)
			return nil
		}
		return err
	})...)
	if waits && wait > 0 {
		if len(kept) == 0 {
			n.logger.Info("unregistered; waiting before closing listeners", "wait", wait)
		} else {
			slices.Sort(kept)
			n.logger.Info(fmt.Sprintf("waiting before closing listeners; not unregistered: %s (see the warning above)", strings.Join(kept, ", ")),
				"wait", wait, "not_unregistered", kept)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-dctx.Done(): // ctx's end, or a wait as long as the budget
		}
		t.Stop()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	type drained struct {
		abandoned int
		which     []AbandonedCalls // the abandoned calls named (server.abandonedNames)
		err       error
	}
	results := map[*server]drained{} // on mu
	for s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.shutdown(dctx)
			s.closed.Store(true)
			for _, r := range refs {
				r.dir.Refresh() // its providers on s are no longer held
			}
			mu.Lock()
			results[s] = drained{n, s.abandonedNames(), err}
			mu.Unlock()
		}()
	}
	// Each server's shutdown is bounded by dctx (plus its own grace,
	// 0.5 s, 0.6 s with dispatcher=direct), naming the session Close or heartbeat stop it left
	// running (server.stuckErrors); as a last resort, a server still
	// closing serverGrace after dctx's end is left running and named.
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	awaitServers(dctx, allDone)
	abandoned := 0
	var which []AbandonedCalls
	mu.Lock()
	for s := range servers {
		d, ok := results[s]
		if !ok {
			left := &LeftRunningError{Op: "shutdown", Step: fmt.Sprintf("transport %q server on %s (its exchange's shutdown)",
				s.transport, net.JoinHostPort(s.host, strconv.Itoa(s.port))), Waited: time.Since(began)}
			markCallerEnded(dctx, left)
			n.logger.Log(context.Background(), leftLevel(dctx), logMsg(left), "op", left.Op, "step", left.Step)
			errs = append(errs, left)
			continue
		}
		abandoned += d.abandoned
		for _, c := range d.which {
			which = addAbandoned(which, c, 0) // each server's bounded already
		}
		if d.err != nil {
			errs = append(errs, d.err)
		}
	}
	mu.Unlock()
	if abandoned > 0 {
		ab := &AbandonedError{Calls: abandoned, Which: which, Timeout: timeout, ContextEnded: context.Cause(dctx) != errDrainTimeout}
		if c, ok := drainEndedByCaller(dctx); ok {
			ab.Ctx, ab.Cause, ab.elapsed = c.Ctx, c.Cause, c.elapsed
		}
		errs = append(errs, ab)
	}
	// Consumer side: closing the references releases their connections,
	// each closing once its calls in flight are answered (as
	// Reference.Close does; Dubbo's graceful shutdown waits for pending
	// requests), within what is left of the same drain bound.
	errs = append(errs, eachConcurrently(refs, func(r *Reference) error { return r.closeWithin(ctx) })...)
	reason := "consumer released the provider"
	if calls, open := n.pool.drain(dctx); calls > 0 {
		reason = fmt.Sprintf("consumer shut down: its calls in flight were not answered within its shutdown timeout %v", timeout)
		if context.Cause(dctx) != errDrainTimeout {
			reason = "consumer shut down: its Shutdown's context ended before its calls in flight were answered"
		}
		// Say so, as the provider side does with AbandonedError: the
		// calls fail CHANNEL_INACTIVE, and their providers may have run
		// them. Only calls count: a connection open with none (a first
		// ping unanswered, say) fails nothing.
		if c, ok := drainEndedByCaller(dctx); ok {
			errs = append(errs, &callerEndedError{end: c, msg: fmt.Sprintf("kernel: shutdown: %s did not return before %s: calls on %s failed CHANNEL_INACTIVE (their providers may have run them)",
				inFlightCalls(calls), c.did(), connections(open))})
		} else {
			errs = append(errs, fmt.Errorf("kernel: %s: calls on %s failed CHANNEL_INACTIVE (%s; their providers may have run them)", reason, connections(open), inFlightCalls(calls)))
		}
	}
	if err := n.pool.closeAllWithin(ctx, n, reason); err != nil {
		errs = append(errs, err)
	}
	for key, r := range regs {
		step := fmt.Sprintf("registry %q Close", registryName(key))
		if err := n.within(ctx, "shutdown", step, r.Close); err != nil {
			var left *LeftRunningError
			if !errors.As(err, &left) {
				err = fmt.Errorf("kernel: close registry %s: %w", key, err)
			}
			errs = append(errs, err)
		}
	}
	n.releaseProviderStats()
	return errors.Join(errs...)
}

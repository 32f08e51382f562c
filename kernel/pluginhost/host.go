package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// Backoff defaults for restarts: the first restart waits DefaultBackoff,
// each further one twice as long, capped at DefaultMaxBackoff. A plugin
// that ran for StableAfter before exiting starts again from DefaultBackoff.
const (
	DefaultBackoff    = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
	StableAfter       = 30 * time.Second
)

// PointService is the plugin point of provider implementations (the other
// points are the catalog's: loadbalance, registry, filter).
const PointService = pluginrpc.PointService

// Option configures a Host (behaviour only; what to run is config).
type Option func(*Host)

// WithLogger sets the host's logger (default slog.Default()). Plugin stderr
// is logged through it too, under the attribute plugin=<name>.
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.log = l } }

// WithPanicStackLevel logs the stack of a panic that a plugin recovered
// and logged (the sdk's "panic in plugin code", whose "stack" attribute
// is some kilobytes) as a record of its own at level, after the record
// it came from, which keeps its other attributes (where, panic). Without
// it the stack stays an attribute of that record. A one-shot command
// whose log is the user's terminal (call, bench) passes slog.LevelDebug:
// one line at its default level, the stack at debug.
func WithPanicStackLevel(level slog.Level) Option {
	return func(h *Host) { h.stackLevel = &level }
}

// WithRecoveryLevel sets the level of the line that says a restarted
// plugin runs again ("plugin running" with restarted_after); default
// slog.LevelInfo: it ends an incident, and a long-running host's alert
// that counts warnings must not fire on the recovery. A one-shot command
// that logs at warn (call, bench) passes slog.LevelWarn, so that the
// user's terminal shows the end of an outage as well as its start.
func WithRecoveryLevel(level slog.Level) Option {
	return func(h *Host) { h.recoveryLevel = level }
}

// WithBackoff sets the first restart delay and its cap.
func WithBackoff(first, max time.Duration) Option {
	return func(h *Host) { h.backoff, h.maxBackoff = first, max }
}

// WithConfigFile names the file that declared the plugins (the
// --config of serve, call, bench: "/etc/airnode/node.yaml"), which the
// advice of a plugin's failure names where it says which key to change
// (a sha256 mismatch at a restart: "set this plugin's sha256 in FILE to
// ..."). Default, and for "": "plugins.yaml".
func WithConfigFile(path string) Option {
	return func(h *Host) {
		if path != "" {
			h.configFile = path
		}
	}
}

// Host supervises the plugin processes of one node.
type Host struct {
	log                          *slog.Logger // base with component="plugin host"
	base                         *slog.Logger // WithLogger's
	backoff, maxBackoff          time.Duration
	pingEvery, unresponsiveAfter time.Duration // WithLiveness
	stackLevel                   *slog.Level   // WithPanicStackLevel
	recoveryLevel                slog.Level    // WithRecoveryLevel
	configFile                   string        // WithConfigFile's; "plugins.yaml" by default
	envLevelOnce                 sync.Once     // warnLogLevel's warning about the environment's

	procs []*proc

	mu      sync.Mutex
	started bool
	closed  bool
	// shuttingDown: ShuttingDown was called; handovers are not started
	shuttingDown atomic.Bool
	shutdown     chan struct{} // closed by ShuttingDown, as it sets shuttingDown
	done         chan struct{} // closed by Close: supervisors stop restarting
	wg           sync.WaitGroup

	changedMu sync.Mutex    // guards changed only; taken under a proc's mu
	changed   chan struct{} // closed at the next state change of any plugin (Changed)
}

// New returns a Host for the plugins declared in specs. It does no I/O;
// Start launches them. Specs are assumed validated by config.Validate.
func New(specs []config.Plugin, opts ...Option) *Host {
	h := &Host{log: slog.Default(), configFile: "plugins.yaml", backoff: DefaultBackoff, maxBackoff: DefaultMaxBackoff, done: make(chan struct{}),
		shutdown: make(chan struct{}), changed: make(chan struct{}), pingEvery: DefaultPingInterval, unresponsiveAfter: DefaultUnresponsiveAfter}
	for _, o := range opts {
		o(h)
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.base, h.log = h.log, h.log.With("component", "plugin host")
	for _, s := range specs {
		h.procs = append(h.procs, newProc(h, s))
	}
	return h
}

// Start launches every plugin concurrently and waits for each handshake
// (bounded by its start_timeout). A plugin that cannot start (sha256
// mismatch, stray stdout, timeout, a point it does not provide) is marked
// failed and reported in the returned error, which names it, its binary
// and the reason (how the process ended and its last stderr lines); the
// others run regardless, and Register still catalogues the failed one so
// that a URL selecting it fails with that reason. ctx bounds the whole
// start.
//
// The returned error joins (errors.Join) one *StartError per plugin that
// did not start, in declaration order, each carrying the plugin's index
// among the declarations given to New.
func (h *Host) Start(ctx context.Context) error { return h.start(ctx, nil) }

// StartError is one plugin's failure to start, as Start, StartPoints and
// StartIf join them: Index is the plugin's position in the declarations
// New was given (plugins.yaml's plugins[Index], as Plugins lists it),
// Name and Point its declared name and point, Err why (its text is the
// error's text; a start cut short by ctx ends in ctx's error).
type StartError struct {
	Index       int
	Name, Point string
	Err         error
}

func (e *StartError) Error() string { return e.Err.Error() }

func (e *StartError) Unwrap() error { return e.Err }

// StartPoints is Start for the plugins of the given points only
// (loadbalance, registry, filter, service): the others are not launched
// and stay StateNotStarted. A consumer starts no service plugin, whose
// services only a provider exports (Dubbo's reference never instantiates
// the service's implementation): StartPoints(ctx, "loadbalance",
// "registry", "filter").
func (h *Host) StartPoints(ctx context.Context, points ...string) error {
	return h.start(ctx, func(p config.Plugin) bool { return slices.Contains(points, p.Point) })
}

// StartIf is Start for the plugins use returns true for: the others are
// not launched and stay StateNotStarted. A command that knows which
// plugins it may use (the ones its URL names) starts only those.
func (h *Host) StartIf(ctx context.Context, use func(config.Plugin) bool) error {
	return h.start(ctx, use)
}

// start launches the plugins use accepts (all when nil).
func (h *Host) start(ctx context.Context, use func(config.Plugin) bool) error {
	h.mu.Lock()
	if h.started || h.closed {
		h.mu.Unlock()
		return errors.New("pluginhost: Start called twice or after Close")
	}
	h.started = true
	h.mu.Unlock()
	errs := make([]error, len(h.procs))
	var wg sync.WaitGroup
	var started []*proc
	for _, p := range h.procs {
		if use == nil || use(p.spec) {
			started = append(started, p)
		}
	}
	h.warnLogLevel(started)
	for i, p := range h.procs {
		if use != nil && !use(p.spec) {
			p.mu.Lock()
			p.setStateLocked(StateNotStarted, "", nil)
			p.mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.start(ctx); err != nil {
				errs[i] = &StartError{Index: i, Name: p.spec.Name, Point: p.spec.Point, Err: err}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Register adds the extension of every plugin to c, with the plugin
// binary's path as origin: loadbalance, registry and filter plugins go
// into their catalogs under the plugin's configured name. A plugin may not
// shadow an extension already registered (bundled or another plugin): that
// plugin is skipped with an error naming both. Balancers fall back to c's
// default balancer while their plugin is down. A plugin that never ran
// (its start failed, or StartPoints did not start it) is catalogued under
// its name too, declaring no keys and activated on no side, and building
// it fails with the start's error (or "not started"): a URL that selects
// it fails saying why, instead of "unknown loadbalance".
func (h *Host) Register(c *extension.Catalogs) error {
	var errs []error
	for _, p := range h.procs {
		if err := p.register(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Service is one service served by a service plugin.
type Service struct {
	// Plugin is the configured plugin name; Name the service name
	// ("greeter.Greeter"); Methods its methods, sorted.
	Plugin, Name string
	Methods      []string
	proc         *proc
}

// Invoker returns an invoker forwarding calls to the plugin, with URL u
// (the export URL). While the plugin is down it is not available and
// Invoke fails fast with SERVICE_NOT_FOUND naming the plugin and why (the
// call did not run: a failover consumer retries it elsewhere); a call the
// plugin had when its process died fails CHANNEL_INACTIVE saying it may
// have run (a consumer retries it only for an idempotent method). Calls
// whose deadline passed before the plugin answered are logged in a
// warning naming the plugin: the first at once, then how many more
// followed, at most once per DeadlineLogInterval (deadlineLog).
func (s Service) Invoker(u spi.URL) spi.Invoker {
	return pluginrpc.NewServiceInvoker(pluginrpc.ServiceOptions{Service: s.Name, URL: u, Source: s.proc,
		OnDeadline: s.proc.deadlines.warn})
}

// Services lists the services of every service plugin that started, sorted
// by name.
func (h *Host) Services() []Service { return h.services(false) }

// CheckedServices lists the services of the service plugins CheckPoints
// ran once (StateChecked), sorted by name: what serve would export for
// them (`airnode list` checks them as serve does). Their invokers fail
// with the plugin unavailable: it does not run.
func (h *Host) CheckedServices() []Service { return h.services(true) }

// services lists the services of the service plugins that started, or
// of those CheckPoints checked.
func (h *Host) services(checked bool) []Service {
	var out []Service
	for _, p := range h.procs {
		if p.spec.Point != PointService {
			continue
		}
		if checked && p.info().State != StateChecked || !checked && p.neverStarted() {
			continue
		}
		for _, d := range p.description().Services {
			out = append(out, Service{Plugin: p.spec.Name, Name: d.Name, Methods: d.Methods, proc: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// State is a plugin's state.
type State string

// Plugin states.
const (
	StateStarting   State = "starting"
	StateRunning    State = "running"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
	// StateNotStarted: StartPoints did not launch it (not of its points).
	StateNotStarted State = "not started"
	// StateChecked: Host.CheckPoints ran it once, its handshake answered
	// and its binary provides its point, and the process was stopped at
	// once; PluginInfo's ProtocolVersion and Provides are what that run
	// learned. It is not running: the command does not use it.
	StateChecked State = "checked"
)

// PluginInfo describes one plugin for `airnode list`.
type PluginInfo struct {
	Name, Point string
	// Path is the absolute path of the plugin binary (the catalog origin).
	Path string
	// Provides is what the binary itself names what it serves: for a
	// loadbalance, registry or filter plugin, its extension's own name
	// (the builder's Name(), which may differ from Name: the extension is
	// catalogued and selected under Name, and the host logs the
	// difference when the plugin first runs); for a service plugin, the
	// names of its services. Nil until the plugin first ran. `airnode
	// list` shows it in its NAME IN BINARY column.
	Provides []string
	// ProtocolVersion is the negotiated plugin protocol version (0 until
	// the first handshake).
	ProtocolVersion int
	// Keys are the URL keys the plugin's extension declares
	// (spi.KeyDescriber, sent at the handshake); nil until it first ran.
	Keys  []spi.KeyDoc
	State State
	// Reason says why the plugin is restarting, failed or stopped.
	Reason string
	// Unresponsive: the plugin runs (StateRunning) but its process has
	// not answered the host's liveness ping for the host's bound
	// (WithLiveness; DefaultUnresponsiveAfter) since SilentSince; it
	// clears when a ping is answered. The host does not restart it.
	Unresponsive bool
	SilentSince  time.Time
	PID          int
	// Restarts counts the quick exits in a row (the exponent of the
	// restart backoff): reset once a process has run StableAfter.
	Restarts int
	// RestartsTotal counts every restart since the host started (each
	// relaunch after an exit the host did not ask for, failed relaunches
	// included, and each handover to a new process), never reset:
	// airnode_plugin_restarts_total.
	RestartsTotal int
	// LastExit is when the plugin's process last exited without the host
	// asking (a crash, a kill, an exit of its own); zero when it never
	// did.
	LastExit time.Time
	// ProvidedPoints is set when the plugin failed to start because its
	// binary does not provide Point, the point plugins.yaml declares it
	// under: the points it does provide (pluginrpc.Points' order). Nil
	// otherwise. `airnode list` fails (exit 1) for such a plugin.
	ProvidedPoints []string
	// SHA256Mismatch is set while the plugin is failed because its
	// binary's sha256 is not the one plugins.yaml pins (its sha256 key):
	// at its first start, or at a restart (the host then waits for the
	// pinned binary).
	SHA256Mismatch bool
}

// StateString renders the state for people: "running",
// "restarting: reason", "failed: reason".
func (i PluginInfo) StateString() string {
	if i.Unresponsive && i.State == StateRunning {
		return fmt.Sprintf("%s: unresponsive: its process has answered no liveness ping for %v", i.State, time.Since(i.SilentSince).Round(time.Second))
	}
	if i.Reason == "" {
		return string(i.State)
	}
	return string(i.State) + ": " + i.Reason
}

// GaveUp reports whether the host will not run the plugin again: it
// failed (its first start failed, or it exited under restart: never)
// or it was stopped (the host closed). A plugin restarting (with
// backoff) or not started is not given up on. One failed plugin may run
// again: a restart refused because its binary's sha256 is no longer the
// pinned one, which the host starts once the file matches again (it is
// then running, and no longer given up on).
func (i PluginInfo) GaveUp() bool { return i.State == StateFailed || i.State == StateStopped }

// Plugins describes every declared plugin, in declaration order.
func (h *Host) Plugins() []PluginInfo {
	out := make([]PluginInfo, 0, len(h.procs))
	for _, p := range h.procs {
		out = append(out, p.info())
	}
	return out
}

// Changed returns a channel that is closed at the next state change of
// any plugin (running, restarting, failed, stopped): a watcher reads
// Plugins, then waits on the channel it took before reading, so that no
// change is missed (the level-triggered pattern of a condition variable
// with a channel). The host gives up on a plugin (GaveUp) when it exits
// under restart: never, or its binary's sha256 no longer matches at a
// restart; `airnode serve` then unregisters
// the services that depend on it (a service plugin's, and those whose
// provider filter chain holds a filter plugin). Never blocks; safe for
// concurrent use.
func (h *Host) Changed() <-chan struct{} {
	h.changedMu.Lock()
	defer h.changedMu.Unlock()
	return h.changed
}

// stateChanged wakes the watchers of Changed. Called under a proc's mu.
func (h *Host) stateChanged() {
	h.changedMu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.changedMu.Unlock()
}

// Close stops every plugin — the graceful go-plugin shutdown first, a kill
// after 2s — and waits for the supervisors. Idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return nil
	}
	h.closed = true
	close(h.done)
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range h.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop()
		}()
	}
	wg.Wait()
	h.wg.Wait()
	return nil
}

// ShuttingDown tells the host that its node has begun to shut down (it
// closes the host last): from then on a plugin's request for a handover
// (pluginrpc.HandoverKey: an sdk plugin that got a SIGTERM, as every
// process of a systemd service does when it is stopped) starts no new
// process; the plugin serves the node's drain until Close. Exits are still
// restarted. Idempotent; safe for concurrent use, and on a nil Host.
func (h *Host) ShuttingDown() {
	if h != nil {
		if h.shuttingDown.CompareAndSwap(false, true) {
			close(h.shutdown)
		}
	}
}

// spawn runs f as a goroutine owned by h, unless h is closed.
func (h *Host) spawn(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

func (h *Host) closing() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// errDown is what calls get while a plugin is not running.
func errDown(name, point string, st State, reason string) error {
	what := string(st)
	if reason != "" {
		what += ": " + reason
	}
	msg := fmt.Sprintf("pluginhost: %s plugin %q is unavailable (%s)", point, name, what)
	return &spi.Error{Status: spi.StatusServerError, Message: msg, Cause: downState(st)}
}

// downState is the cause of errDown's error: the plugin's state, which
// tells an adapter whether a process is to come
// (pluginrpc.RestartPending): starting or restarting, not failed or
// stopped.
type downState State

func (s downState) Error() string { return "plugin " + string(s) }

// RestartPending implements pluginrpc.RestartPending.
func (s downState) RestartPending() bool {
	return State(s) == StateStarting || State(s) == StateRestarting
}

var _ pluginrpc.RestartPending = downState("")

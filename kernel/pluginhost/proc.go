package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// live is the published state of a plugin that calls read on every use.
type live struct {
	c   *pluginrpc.Client
	gen uint64
	// desc is how the process of gen described its point at its start
	// (what its build speaks and declares: a filter's Chain and
	// Activation, WithoutArgs, its URL keys); while down, the last process's
	// (DescribedSource); nil before the first start
	desc *pluginrpc.Description
	err  error // non-nil while the plugin is down
}

// proc supervises one plugin process. It is the pluginrpc.Source of the
// adapters built for it.
type proc struct {
	h    *Host
	spec config.Plugin
	path string // absolute binary path: the catalog origin
	log  *slog.Logger

	cur atomic.Pointer[live]

	// launchMu serializes the launches of a new process: a restart's and
	// a handover's
	launchMu sync.Mutex
	// takeover is the pid of the process a launch in progress takes over
	// from (handover), 0 otherwise
	takeover int

	mu       sync.Mutex
	state    State
	reason   string
	version  int
	pid      int
	restarts int // quick exits in a row: the backoff's exponent
	// restartsTotal counts every restart (each relaunch after an exit the
	// host did not ask for, each handover), never reset:
	// airnode_plugin_restarts_total
	restartsTotal int
	gen           uint64
	desc          pluginrpc.Description
	client        *plugin.Client
	cmd           *exec.Cmd  // client's process
	tail          *startTail // client's log state: stop marks it stopped by the host
	changed       chan struct{}
	everRan       bool
	exited        time.Time // when the running process exited; zero before the first exit
	probe         bool      // one unsupervised run (Probe)
	check         bool      // with probe: Describe spec.Point as a supervised start does (Host.CheckPoints)
	startErr      error     // why the first launch failed (StateFailed, never ran)
	// points: the points the binary provides, when its Describe said it
	// does not provide spec.Point (PluginInfo.ProvidedPoints)
	points []string
	// sumMismatch: the plugin is failed because its binary's sha256 is
	// not the pinned one (PluginInfo.SHA256Mismatch)
	sumMismatch bool
	// silentSince: when the unanswered liveness ping of the process of
	// generation silentGen was sent (watchLiveness); zero while it answers
	silentSince time.Time
	silentGen   uint64
	// brokenWhy: why the host killed the process of brokenTail, whose
	// connection broke while it ran (restartBroken), for supervise's
	// warning and the restarting state's reason
	brokenTail *startTail
	brokenWhy  string
	// deadlines is the OnDeadline of the plugin's service invokers and
	// filters (its warn), one per plugin across its restarts; stopped by
	// stop
	deadlines *deadlineLog
}

func newProc(h *Host, s config.Plugin) *proc {
	path := s.Command
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	p := &proc{h: h, spec: s, path: path, state: StateStarting, changed: make(chan struct{}),
		log: h.log.With("plugin", s.Name, "point", s.Point)}
	p.deadlines = newDeadlineLog(p.log, s.Point)
	p.cur.Store(&live{err: errDown(s.Name, s.Point, StateStarting, "")})
	return p
}

// Current implements pluginrpc.Source.
func (p *proc) Current() (*pluginrpc.Client, uint64, error) {
	l := p.cur.Load()
	return l.c, l.gen, l.err
}

// Described implements pluginrpc.DescribedSource: Current with the
// Description the running process gave at its start, which a restart or
// a handover into another build of the binary changes.
func (p *proc) Described() (*pluginrpc.Client, uint64, *pluginrpc.Description, error) {
	l := p.cur.Load()
	return l.c, l.gen, l.desc, l.err
}

// Changed implements pluginrpc.Source.
func (p *proc) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// setState records a state change and wakes adapters waiting on Changed.
// Caller holds p.mu.
func (p *proc) setStateLocked(st State, reason string, l *live) {
	p.state, p.reason = st, reason
	p.sumMismatch = false // start and awaitChecksum set it after a failed state
	if l == nil {
		l = &live{err: errDown(p.spec.Name, p.spec.Point, st, reason)}
		if p.desc.Point != "" { // a process described itself: the next is likely the same build
			d := p.desc
			l.desc = &d
		}
	}
	p.cur.Store(l)
	close(p.changed)
	p.changed = make(chan struct{})
	p.h.stateChanged()
}

func (p *proc) neverStarted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.everRan
}

func (p *proc) description() pluginrpc.Description {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.desc
}

func (p *proc) info() PluginInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := PluginInfo{Name: p.spec.Name, Point: p.spec.Point, Path: p.path, ProtocolVersion: p.version,
		State: p.state, Reason: p.reason, Restarts: p.restarts, RestartsTotal: p.restartsTotal,
		LastExit: p.exited, ProvidedPoints: slices.Clone(p.points), SHA256Mismatch: p.sumMismatch}
	if p.state == StateRunning {
		i.PID = p.pid
		if p.silentGen == p.gen && !p.silentSince.IsZero() {
			i.Unresponsive, i.SilentSince = true, p.silentSince
		}
	}
	if p.desc.Name != "" {
		i.Provides = []string{p.desc.Name}
	}
	i.Keys = p.desc.Keys
	for _, s := range p.desc.Services {
		i.Provides = append(i.Provides, s.Name)
	}
	return i
}

// start is the first launch: a failure marks the plugin failed for good
// (a bad checksum or a binary that cannot handshake does not get better by
// restarting).
func (p *proc) start(ctx context.Context) error {
	if err := p.launch(ctx); err != nil {
		p.mu.Lock()
		p.startErr = err
		p.setStateLocked(StateFailed, err.Error(), nil)
		var sum *checksumError
		p.sumMismatch = errors.As(err, &sum)
		p.mu.Unlock()
		p.log.Debug("plugin failed to start", "err", err) // Start returns it; the caller reports it
		return err
	}
	return nil
}

// launch starts the process, performs the handshake and publishes the
// client; on success the plugin is running and supervised.
func (p *proc) launch(ctx context.Context) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("pluginhost: plugin %q (%s): %s", p.spec.Name, p.path, fmt.Sprintf(format, args...))
	}
	switch p.spec.Point {
	case extension.PointLoadBalance, extension.PointRegistry, extension.PointFilter, PointService:
	default:
		return fail("point %q cannot be served by a plugin (allowed: %s); transport, codec, heartbeat and cluster stay in process%s",
			p.spec.Point, strings.Join(pluginrpc.Points, ", "), config.PointHint(p.spec.Point))
	}
	want := strings.ToLower(p.spec.SHA256)
	if want != "" {
		got, err := fileSHA256(p.path)
		if err != nil {
			hint := ""
			if errors.Is(err, fs.ErrNotExist) {
				hint = p.commandHint()
			}
			return fail("checksum: %v%s", err, hint)
		}
		if got != want {
			return fmt.Errorf("pluginhost: plugin %q (%s): %w", p.spec.Name, p.path, &checksumError{want: want, got: got})
		}
	}
	timeout := p.spec.StartTimeout
	if timeout <= 0 {
		timeout = config.DefaultPluginStartTimeout
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	// mute silences go-plugin's own complaints while a failed start is
	// cleaned up ("plugin failed to exit gracefully" about a process that
	// never ran): the returned error says what went wrong.
	mute := new(atomic.Bool)
	tail := &startTail{stackLevel: p.h.stackLevel, records: lineBound{noun: "records"}}
	w := p.slogWriter(mute, tail)
	cmd := exec.Command(p.path, p.spec.Args...)
	dieWithHost(cmd)
	for k, v := range p.spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// go-plugin appends os.Environ() after ours; put ours last so they win.
	cmd.Env = append(os.Environ(), cmd.Env...)
	if lvl := p.pluginLogLevel(); lvl != "" {
		cmd.Env = append(cmd.Env, pluginrpc.EnvLogLevel+"="+lvl)
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: pluginrpc.ClientPlugins(),
		// cmd with go-plugin's variables (spec.Env), run by cmdRunner,
		// whose Kill lets a process that closed its stdout exit first;
		// the binary's sum is checked again just before it starts, as
		// go-plugin's SecureConfig would
		RunnerFunc: func(l hclog.Logger, spec *exec.Cmd, socketDir string) (runner.Runner, error) {
			cmd.Env = append(cmd.Env, spec.Env...)
			cmd.Stdin = spec.Stdin
			if want != "" {
				if got, err := fileSHA256(p.path); err != nil || got != want {
					_ = os.RemoveAll(socketDir) // go-plugin's Kill removes it only after a runner
					return nil, plugin.ErrChecksumsDoNotMatch
				}
			}
			return newCmdRunner(l, cmd, w)
		},
		SkipHostEnv:      true,
		StartTimeout:     timeout,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclogFor(w),
		SyncStdout:       &lineLogger{l: p.log, stream: "stdout"},
		SyncStderr:       &lineLogger{l: p.log, stream: "stderr"},
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(pluginrpc.MaxMessage), grpc.MaxCallSendMsgSize(pluginrpc.MaxMessage)),
			grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				tail.inflight.Add(1) // a handover waits for the old process's calls
				defer tail.inflight.Add(-1)
				return invoker(ctx, method, req, reply, cc, opts...)
			})},
	})
	began := time.Now()
	rpcClient, err := handshake(ctx, client, tail)
	if err != nil {
		mute.Store(true)
		stopProcess(client, cmd, 0) // its process group too: a wrapper's children hold its pipes
		tail.settle(p.log, true)
		if ctx.Err() != nil {
			return fail("its start was cut short after %v (%v), before the handshake; its process was stopped",
				time.Since(began).Round(time.Millisecond), context.Cause(ctx))
		}
		return p.explain(err, timeout, cmd.ProcessState, tail)
	}
	pid := cmd.Process.Pid
	raw, err := rpcClient.Dispense(p.spec.Point)
	if err != nil {
		stopProcess(client, cmd, 0)
		tail.settle(p.log, true)
		return fail("%v", err)
	}
	c := raw.(*pluginrpc.Client)
	var desc pluginrpc.Description
	if !p.probe || p.check { // a probe asks every point itself
		dctx, cancel := context.WithTimeout(ctx, timeout)
		desc, err = pluginrpc.Describe(dctx, c, p.spec.Point)
		var points []string
		if err != nil && strings.Contains(err.Error(), "does not provide") {
			var instead string
			instead, points = providedInstead(dctx, c)
			err = fmt.Errorf("%w%s", err, instead)
		}
		p.mu.Lock()
		p.points = points
		p.mu.Unlock()
		cancel()
		if err != nil {
			stopProcess(client, cmd, 0)
			tail.settle(p.log, true)
			return fail("%v", err)
		}
	}
	tail.settle(p.log, false)

	p.mu.Lock()
	if p.h.closing() {
		p.mu.Unlock()
		tail.stoppedByHost("the host is closing")
		stopProcess(client, cmd, killGrace)
		return fail("host is closing")
	}
	p.gen++
	gen, first, exited, from, prev := p.gen, !p.everRan, p.exited, p.takeover, p.desc
	p.client, p.cmd, p.tail, p.desc, p.pid, p.version, p.everRan = client, cmd, tail, desc, pid, client.NegotiatedVersion(), true
	p.setStateLocked(StateRunning, "", &live{c: c, gen: p.gen, desc: &desc})
	p.mu.Unlock()
	switch {
	case from != 0:
		p.log.Info("plugin running", "path", p.path, "pid", pid, "protocol", client.NegotiatedVersion(), "took_over_from", from)
	case exited.IsZero():
		p.log.Info("plugin running", "path", p.path, "pid", pid, "protocol", client.NegotiatedVersion())
	default:
		// The end of the WARN lines of its exit: info by default, as
		// every line that ends an incident (an alert counting WARN lines
		// must not fire on the recovery; tester72 #6); warn for call and
		// bench, which log at warn (WithRecoveryLevel).
		p.log.Log(context.Background(), p.h.recoveryLevel, "plugin running", "path", p.path, "pid", pid,
			"protocol", client.NegotiatedVersion(), "restarted_after", time.Since(exited).Round(time.Millisecond))
	}
	if !first && !p.probe {
		p.noteRedescribed(prev, desc)
		p.reclaimKeys(desc)
	}
	if first {
		p.noteOwnName(desc.Name)
		if !p.probe { // a check (plugin check, list) prints them its own way
			p.warnService(desc)
		}
	}

	if p.probe {
		return nil
	}
	started := time.Now()
	if !p.h.spawn(func() { p.supervise(client, cmd, c, started, tail) }) {
		tail.stoppedByHost("the host is closing")
		stopProcess(client, cmd, killGrace)
		return nil
	}
	if p.h.unresponsiveAfter > 0 {
		p.h.spawn(func() { p.watchLiveness(c, gen, pid) })
	}
	return nil
}

// handshake is client.Client(), which starts the process and waits for
// its handshake up to start_timeout, cut short when ctx ends first (a
// signal while serve or call starts its plugins): the process group is
// then killed, by the pid go-plugin logged (tail.pid), so that go-plugin
// sees the process end and returns at once. The caller stops the rest.
func handshake(ctx context.Context, client *plugin.Client, tail *startTail) (plugin.ClientProtocol, error) {
	type result struct {
		c   plugin.ClientProtocol
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := client.Client()
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for killed := false; ; {
		if pid := tail.pid.Load(); pid > 0 && !killed {
			killGroup(int(pid))
			killed = true
		}
		select {
		case r := <-done:
			return r.c, r.err
		case <-tick.C: // not started yet: kill it once it is
		}
	}
}

// providedInstead says what a plugin declared under a point it does not
// provide serves instead: `; it provides filter "tenant": declare it
// with point: filter`, and the points (filter), or "" and nil when it
// answers for no point.
func providedInstead(ctx context.Context, c *pluginrpc.Client) (string, []string) {
	var what, points []string
	for _, point := range pluginrpc.Points {
		d, err := pluginrpc.Describe(ctx, c, point)
		if err != nil {
			continue
		}
		name := fmt.Sprintf("%q", d.Name)
		for i, sv := range d.Services {
			if i == 0 {
				name = ""
			}
			name += " " + sv.Name
		}
		what = append(what, point+" "+strings.TrimSpace(name))
		points = append(points, point)
	}
	if len(what) == 0 {
		return "", nil
	}
	return fmt.Sprintf("; it provides %s: declare it with point: %s", strings.Join(what, ", "), strings.Join(points, " or ")), points
}

// noteOwnName logs, at info, that the plugin's extension names itself
// (its builder's Name(), own) otherwise than the plugin is declared
// (plugins.yaml name:). The declared name is the one used: the extension
// is catalogued under it and URLs select it by it (loadbalance=DECLARED,
// filter=DECLARED, a registry URL of scheme DECLARED); its own name
// does not select it (it may select a bundled extension of that name),
// while the URL keys it declares keep their names.
// Declaring another name is how a binary joins next to a bundled
// extension of its name (the p2c example as acme.p2c), so it is not a
// warning. Nothing for a service plugin, whose services keep their names.
func (p *proc) noteOwnName(own string) {
	if own == "" || own == p.spec.Name || p.spec.Point == PointService {
		return
	}
	p.log.Info(fmt.Sprintf("plugin's %s calls itself %q but is declared as %q: the declared name is used (%s); %q does not select it",
		p.spec.Point, own, p.spec.Name, selectByName(p.spec.Point, p.spec.Name), own), "own_name", own)
}

// warnService logs, at warn, each problem the sdk found in the services
// of a service plugin (pluginrpc.ServiceDesc.Warnings, what `airnode
// plugin check` prints: a variadic method not served, an argument type
// only null fills), once, when the plugin first runs, as Export logs the
// methods of an in-process service it does not serve.
// noteRedescribed logs what the process just started (a restart or a
// handover, maybe into another build of the binary) declares unlike the
// one before it (prev). A filter's activation (sides, key, order) at
// warn: the kernel reads it at each Refer and Export (the adapter takes
// the running process's, DescribedSource), so the chains built before
// keep the filters the old one chose until they are built again. Whether
// a balancer or filter reads the call's arguments at info: the adapters
// follow it from the next call. The URL keys it declares, at warn: the
// adapters' Keys follow it (the catalog's Describe, and so the
// unknown-key warnings of the Refers and Exports made from now on), while
// the URLs referred and exported before were checked against the old ones.
func (p *proc) noteRedescribed(prev, now pluginrpc.Description) {
	if prev.Point == "" || now.Point == "" {
		return // a process that did not describe itself (never here for a supervised start)
	}
	if p.spec.Point == extension.PointFilter && !sameActivation(prev.Activation, now.Activation) {
		p.log.Warn("plugin's new process declares another activation: references and exports made from now on use it, "+
			"those made before keep their filter chains as the old activation chose them; "+
			"restart the node (airnode serve) for them to follow; a URL whose filter key names it (filter="+p.spec.Name+", or -"+p.spec.Name+") does not depend on its activation",
			"path", p.path, "old", activationText(prev.Activation), "new", activationText(now.Activation))
	}
	if prev.WithoutArgs != now.WithoutArgs {
		msg := "plugin's new process reads the call's arguments (the one before did not): the host sends them from the next call"
		if now.WithoutArgs {
			msg = "plugin's new process does not read the call's arguments (the one before did): the host stops sending them from the next call"
		}
		p.log.Info(msg, "path", p.path)
	}
	if added, removed := keysChanged(prev.Keys, now.Keys); len(added)+len(removed) > 0 {
		p.log.Warn("plugin's new process declares other URL keys: the unknown-key warnings of references and exports made from now on "+
			"count them, those made before were checked against the old ones",
			"path", p.path, "added", added, "removed", removed)
	}
}

// reclaimKeys applies the catalog's rule for declared URL keys to those
// the process just started (a restart or a handover, desc its
// description) declares, as Register applied it to the first process's
// (extension.ClaimRedeclaredKeys): a new Secret key is marked secret
// process-wide, so that logs and printed URLs hide its value; a key that
// conflicts with one of the kernel or of another extension is ignored
// (not recorded, its mark not made), logged at warn naming the key, the
// plugin and the key's owner, and the plugin keeps running. Nothing for
// a service plugin, which is not catalogued.
func (p *proc) reclaimKeys(desc pluginrpc.Description) {
	var act spi.Activation
	switch p.spec.Point {
	case extension.PointFilter:
		act = desc.Activation
	case extension.PointLoadBalance, extension.PointRegistry:
	default:
		return
	}
	for _, err := range extension.ClaimRedeclaredKeys(p.spec.Point, p.spec.Name, extension.Origin(p.path), desc.Keys, act) {
		p.log.Warn("plugin's new process declares a URL key that conflicts with another owner's: the key is ignored (no secret mark is made for it); the plugin keeps running",
			"path", p.path, "err", err)
	}
}

// keysChanged returns the keys now declares and prev does not (added) and
// those prev declares and now does not (removed), each sorted; a key
// declared by both, whatever its doc, is neither.
func keysChanged(prev, now []spi.KeyDoc) (added, removed []string) {
	names := func(ks []spi.KeyDoc) map[string]bool {
		m := make(map[string]bool, len(ks))
		for _, k := range ks {
			m[k.Key] = true
		}
		return m
	}
	was, is := names(prev), names(now)
	for k := range is {
		if !was[k] {
			added = append(added, k)
		}
	}
	for k := range was {
		if !is[k] {
			removed = append(removed, k)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}

// sameActivation reports whether a and b activate a filter alike.
func sameActivation(a, b spi.Activation) bool {
	return slices.Equal(a.Sides, b.Sides) && a.Key == b.Key && a.Order == b.Order &&
		a.PerProvider == b.PerProvider && a.PerMethod == b.PerMethod
}

// activationText is a for the log: `sides [consumer provider], key
// "tenant", order 0`; key "" when the filter needs none.
func activationText(a spi.Activation) string {
	return fmt.Sprintf("sides %v, key %q, order %d", a.Sides, a.Key, a.Order)
}

func (p *proc) warnService(desc pluginrpc.Description) {
	for _, s := range desc.Services {
		for _, w := range s.Warnings {
			p.log.Warn("service plugin: "+w, "service", s.Name)
		}
	}
}

// selectByName says how a URL selects the extension catalogued as name at
// point: "filter=acme.authz", "loadbalance=acme.p2c", "a registry URL
// acme.reg://...".
func selectByName(point, name string) string {
	if point == extension.PointRegistry {
		return "a registry URL " + name + "://..."
	}
	return point + "=" + name
}

// pluginLogLevel returns the AIRNODE_PLUGIN_LOG a plugin gets from the
// host's own log level: "debug" when the host logs debug records (airnode
// --log-level debug) and neither the host's environment nor the plugin's
// env in plugins.yaml sets AIRNODE_PLUGIN_LOG; "" otherwise (the plugin
// logs at its default, info, or at the level set). The host drops the
// plugin's records below its own level anyway.
func (p *proc) pluginLogLevel() string {
	if _, set := p.spec.Env[pluginrpc.EnvLogLevel]; set {
		return ""
	}
	if _, set := os.LookupEnv(pluginrpc.EnvLogLevel); set {
		return ""
	}
	if p.log.Enabled(context.Background(), slog.LevelDebug) {
		return "debug"
	}
	return ""
}

// killGrace is how long stopProcess lets go-plugin end a plugin (its
// graceful shutdown takes up to 2 s) before it kills the plugin's process
// group.
const killGrace = 3 * time.Second

// stopProcess ends client's plugin process and returns when go-plugin has
// released it: client.Kill (a graceful shutdown when the plugin was
// connected, then SIGKILL) and, after grace (at once when 0), SIGKILL to
// the plugin's process group, which ends the children of a wrapper script
// still holding its stdout or stderr: go-plugin reads both to their end
// before it reaps the process, so without it Kill waited for them
// (go-plugin's own pattern: a process group of its own, killed with it).
// The group is killed after Kill returns too, for descendants that hold
// no pipe.
func stopProcess(client *plugin.Client, cmd *exec.Cmd, grace time.Duration) {
	pid := 0
	if cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		client.Kill()
	}()
	if grace > 0 {
		t := time.NewTimer(grace)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	killGroup(pid)
	<-done
	killGroup(pid)
}

// explain turns go-plugin's start errors into ones that name the plugin and
// say what went wrong: how the process ended (ps: nil when it did not
// start or was not reaped) and what it wrote to stderr (t): the Go panic
// it showed, else its last lines, which usually give the reason. Only a
// plugin that wrote nothing on stderr is asked whether it is an airnode
// plugin at all.
func (p *proc) explain(err error, timeout time.Duration, ps *os.ProcessState, t *startTail) error {
	prefix := fmt.Sprintf("pluginhost: plugin %q (%s)", p.spec.Name, p.path)
	tail := t.lines()
	msg := err.Error()
	const stray = "Unrecognized remote plugin message: "
	exited := strings.Contains(msg, "plugin exited before we could connect")
	if i := strings.Index(msg, stray); i >= 0 {
		line, _, _ := strings.Cut(msg[i+len(stray):], "\n")
		if strings.TrimSpace(line) != "" {
			return fmt.Errorf("%s: wrote %q to stdout before the handshake; a plugin must keep stdout for the handshake and log to stderr%s", prefix, line, tailText("; ", tail))
		}
		if !strings.Contains(msg, "Failed to read any lines") {
			// A line came, empty (/bin/echo): go-plugin then kills the
			// process, which may or may not have exited first, so how it
			// ended says nothing; what it wrote does.
			return fmt.Errorf("%s: wrote an empty line to stdout before the handshake; a plugin must keep stdout for the handshake and log to stderr%s", prefix, tailText("; ", tail))
		}
		exited = true // stdout closed with no line
		if killedByHost(ps) {
			// go-plugin kills the process as soon as its stdout closes:
			// one that closed it before exiting (coreutils' close_stdout,
			// /bin/sleep without an operand) is killed before its own
			// exit, whose status is then unknown; its stderr says why
			return fmt.Errorf("%s: closed its stdout before the handshake, without exiting yet, and the host stopped it%s", prefix, tailText("; ", tail))
		}
	}
	if v, ok := pluginVersion(msg); ok {
		return fmt.Errorf("%s: %s", prefix, versionAdvice(v))
	}
	switch panicked := t.panicked(); {
	case exited && t.otherCookie():
		return fmt.Errorf("%s: %s before the handshake: it was built against a different go-plugin handshake (magic cookie) than airnode's sdk, "+
			"so it took the host for a user running it directly (it printed go-plugin's %q): rebuild it with airnode's sdk "+
			"(github.com/airnode/airnode/sdk, sdk.Serve), which speaks airnode's handshake, or, if it is another application's plugin, declare a binary built for airnode",
			prefix, howEnded(ps), notAPluginLine)
	case exited && panicked != "":
		return fmt.Errorf("%s: %s before the handshake: it panicked: %s", prefix, howEnded(ps), panicked)
	case exited && len(tail) == 0:
		return fmt.Errorf("%s: %s before the handshake, writing nothing on stdout or stderr; is it an airnode plugin (sdk.Serve)?", prefix, howEnded(ps))
	case exited:
		return fmt.Errorf("%s: %s before the handshake%s", prefix, howEnded(ps), tailText("; ", tail))
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return fmt.Errorf("%s: sha256 mismatch (the binary changed while starting); refusing to start it", prefix)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%s: no handshake within start_timeout %v%s", prefix, timeout, tailText("; ", tail))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w%s", prefix, err, p.commandHint())
	}
	return fmt.Errorf("%s: %w%s", prefix, err, tailText("; ", tail))
}

// commandHint says why a command: that names no file most likely does
// not (tester88 #3): `command: ~/bin/x`, as no shell expands ~; or
// `command: "/opt/p2c --debug"` when /opt/p2c exists, a command line
// where the binary's path alone belongs, its arguments going in args:.
// "" when neither.
func (p *proc) commandHint() string {
	c := strings.TrimSpace(p.spec.Command)
	if strings.HasPrefix(c, "~") {
		hint := "; command: starts with ~, which airnode does not expand (no shell reads " + p.h.configFile + "): write the binary's full path"
		if rest, ok := strings.CutPrefix(c, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				hint += fmt.Sprintf(" (%s)", filepath.Join(home, rest))
			}
		}
		return hint
	}
	f := strings.Fields(c)
	if len(f) < 2 {
		return ""
	}
	if st, err := os.Stat(f[0]); err != nil || st.IsDir() {
		return ""
	}
	args := make([]string, len(f)-1)
	for i, a := range f[1:] {
		args[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("; command: is the binary's path alone, not a command line, and %s exists: put the arguments in args: (command: %s, args: [%s])",
		f[0], f[0], strings.Join(args, ", "))
}

// pluginVersion reads the plugin's protocol version from go-plugin's
// "incompatible API version with plugin. Plugin version: 2, Client
// versions: [1]".
func pluginVersion(msg string) (int, bool) {
	const mark = "Plugin version: "
	if !strings.Contains(msg, "incompatible API version") {
		return 0, false
	}
	i := strings.Index(msg, mark)
	if i < 0 {
		return 0, false
	}
	digits := msg[i+len(mark):]
	if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
		digits = digits[:j]
	}
	v, err := strconv.Atoi(digits)
	return v, err == nil
}

// versionAdvice says that a plugin speaking plugin protocol version v
// cannot talk to this host, which side is newer, and what to do.
func versionAdvice(v int) string {
	host := pluginrpc.ProtocolVersion
	if v > host {
		return fmt.Sprintf("it speaks plugin protocol version %d, newer than this host's %d (`airnode version` shows it): "+
			"upgrade airnode to a release that speaks version %d, or rebuild the plugin against the sdk of this airnode release "+
			"(github.com/airnode/airnode/sdk, protocol %d)", v, host, v, host)
	}
	return fmt.Sprintf("it speaks plugin protocol version %d, older than this host's %d (`airnode version` shows it): "+
		"rebuild the plugin against the sdk of this airnode release (github.com/airnode/airnode/sdk, protocol %d), "+
		"or run it with an older airnode that speaks version %d", v, host, host, v)
}

// killedByHost reports whether ps, a plugin process that closed its
// stdout before its handshake, ended by the SIGKILL go-plugin sends then,
// not by an exit of its own.
func killedByHost(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// howEnded says how a plugin process that ended before its handshake
// ended: "exited with status 2", "was ended by signal: killed", or
// "exited" when its status is unknown.
func howEnded(ps *os.ProcessState) string {
	switch {
	case ps == nil:
		return "exited"
	case ps.Exited():
		return fmt.Sprintf("exited with status %d", ps.ExitCode())
	default:
		return "was ended by " + ps.String()
	}
}

// tailText quotes a plugin's last stderr lines after sep: `; its last
// stderr line: "..."`, or "" when there are none.
func tailText(sep string, tail []string) string {
	switch len(tail) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("%sits last stderr line: %q", sep, tail[0])
	}
	q := make([]string, len(tail))
	for i, l := range tail {
		q[i] = fmt.Sprintf("%q", l)
	}
	return fmt.Sprintf("%sits last %d stderr lines: %s", sep, len(tail), strings.Join(q, ", "))
}

// supervise waits for the process to exit and restarts it per policy. The
// warning or error saying it exited carries, when it exited with a
// failure status, its last stderr lines (tail) as last_stderr, one per
// line: the reason it most likely gave.
func (p *proc) supervise(client *plugin.Client, cmd *exec.Cmd, c *pluginrpc.Client, started time.Time, tail *startTail) {
	select {
	case <-c.Done():
	case <-p.h.done:
		return // stop() kills it (handover the process it replaced)
	}
	if p.h.closing() || p.replaced(tail) {
		return // handed over: handover stops and reaps it
	}
	p.mu.Lock()
	p.exited = time.Now()
	p.mu.Unlock()
	// Reap it, release go-plugin's goroutines and end what is left of its
	// process group, then read its status (go-plugin's Wait has set it).
	stopProcess(client, cmd, time.Second)
	status := "exited"
	ok := false
	var why []any
	if ps := cmd.ProcessState; ps != nil {
		status, ok = ps.String(), ps.Success()
		if last := tail.lines(); ps.Exited() && !ok && len(last) > 0 {
			why = []any{"last_stderr", strings.Join(last, "\n")} // a line each, not Go's "[a b c]"
		}
	}
	p.mu.Lock()
	if p.brokenTail == tail {
		status += " (" + p.brokenWhy + ")"
		p.brokenTail = nil
	}
	p.mu.Unlock()
	policy := p.spec.Restart
	if policy == "" {
		policy = config.RestartOnFailure
	}
	if panicked := tail.panicked(); panicked != "" {
		why = []any{"panic", panicked}
	}
	// Any exit the host did not ask for is restarted unless the policy
	// is never, status 0 included: an sdk plugin exits 0 after a SIGTERM
	// the host did not send (sdk.TermGrace), as a plugin that shuts down
	// gracefully on SIGTERM does; read as a deliberate stop, one polite
	// signal left the service down for good (tester72 #1). Only the
	// host's own stop (Close) is final.
	if policy == config.RestartNever {
		p.mu.Lock()
		p.setStateLocked(StateFailed, status+" (restart: "+policy+")", nil)
		p.mu.Unlock()
		p.log.Error("plugin exited; not restarting", append([]any{"status", status, "restart", policy}, why...)...)
		return
	}
	backoff := p.h.backoff
	if time.Since(started) < StableAfter {
		p.mu.Lock()
		backoff = p.backoffLocked()
		p.mu.Unlock()
	} else {
		p.mu.Lock()
		p.restarts = 0
		p.mu.Unlock()
	}
	reason := status
	for attempt := 0; ; attempt++ {
		p.mu.Lock()
		if p.tail != tail { // a handover's new process took over meanwhile
			p.mu.Unlock()
			return
		}
		p.restarts++
		p.restartsTotal++
		p.setStateLocked(StateRestarting, fmt.Sprintf("%s; restart in %v", reason, backoff), nil)
		p.mu.Unlock()
		if attempt == 0 {
			p.log.Warn("plugin exited; restarting", append([]any{"status", reason, "backoff", backoff}, why...)...)
		} else {
			p.log.Warn("plugin restart failed; trying again", "err", reason, "backoff", backoff)
		}
		select {
		case <-p.h.done:
			return
		case <-time.After(backoff):
		}
		p.launchMu.Lock()
		if p.replaced(tail) {
			p.launchMu.Unlock()
			return
		}
		err := p.launch(context.Background())
		p.launchMu.Unlock()
		var sum *checksumError
		if errors.As(err, &sum) {
			err = p.awaitChecksum(err, sum)
		}
		if err == nil || p.h.closing() {
			return // the new process has its own supervisor
		}
		reason = err.Error()
		backoff = min(backoff*2, p.h.maxBackoff)
	}
}

// replaced reports whether the process of tail is no longer the
// plugin's current one: a handover's new process took over.
func (p *proc) replaced(tail *startTail) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tail != tail
}

// handoverDrain bounds how long a handover waits for the calls in flight
// in the old process to end before it closes it (sdk.TermGrace: the old
// process exits by itself then anyway).
const handoverDrain = 30 * time.Second

// requestHandover acts on the first request for a handover of the process
// of tail (its log record with pluginrpc.HandoverKey): handover, on a
// goroutine of the host's.
func (p *proc) requestHandover(tail *startTail) {
	if p.probe || !tail.handoverAsked.CompareAndSwap(false, true) {
		return
	}
	p.h.spawn(func() { p.handover(tail) })
}

// handover replaces the running process of old by a new process of the
// binary, which the plugin asked for (the sdk does on a SIGTERM the host
// did not send: an operator's polite restart, an upgrade in place): it
// starts the new process as a restart does (the pinned sha256 checked),
// and once it runs every new call goes to it; then it waits, up to
// handoverDrain, until the old process has no call in flight, and closes
// it. The service stays registered and no call is refused meanwhile. Not
// when the host is closing, nor when the old process is no longer the
// running one (it exited: the supervisor restarts it). A new process
// that fails to start leaves the old one serving, with a warning naming
// the binary, the cause and the deadline (the old process exits at its
// sdk.TermGrace, and a restart into the same binary would fail too);
// while the old process serves, the host watches the binary
// (awaitBinaryChange) and tries the handover again each time the file
// changes, so a working binary put back in time takes over with no
// outage. Under restart: never no new process is started: that policy
// starts none after the first.
func (p *proc) handover(old *startTail) {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		p.launchMu.Lock()
		p.mu.Lock()
		running := p.tail == old && p.state == StateRunning
		client, cmd, pid := p.client, p.cmd, p.pid
		if running && !p.h.shuttingDown.Load() && p.spec.Restart != config.RestartNever {
			p.takeover = pid
		}
		p.mu.Unlock()
		if !running || p.h.closing() || p.h.shuttingDown.Load() || p.spec.Restart == config.RestartNever {
			p.launchMu.Unlock()
			switch {
			case !running || p.h.closing():
			case p.h.shuttingDown.Load():
				p.log.Info("plugin asked for a handover, but the node is shutting down: it serves until the host closes it", "pid", pid)
			case attempt == 0:
				p.log.Warn("plugin asked for a handover, but its restart policy is never: no new process is started; it serves until it exits, then it is down",
					"pid", pid)
			}
			return
		}
		if attempt == 0 {
			p.log.Info("plugin asked for a handover (a SIGTERM the host did not send): starting a new process to take over its calls", "pid", pid)
		} else {
			p.log.Info("plugin binary changed: trying the handover again", "pid", pid, "path", p.path)
		}
		stamp := binaryStamp(p.path) // before the launch: a change during it is seen after
		err := p.launch(context.Background())
		p.mu.Lock()
		p.takeover = 0
		if err == nil {
			p.restartsTotal++
		}
		newPid := p.pid
		p.mu.Unlock()
		p.launchMu.Unlock()
		if err == nil {
			p.drainHandedOver(old, client, cmd, pid, newPid, began)
			return
		}
		if p.h.closing() {
			return
		}
		p.log.Warn(fmt.Sprintf("plugin handover failed: the new binary at %s did not start, so the running process serves on; "+
			"it exits within %v of its SIGTERM (the sdk's drain, sdk.TermGrace), and restarts into the same binary fail too: "+
			"put a working binary back at %s before then (mv, not a write in place); the host tries the handover again each time that file changes",
			p.path, handoverDrain, p.path),
			"pid", pid, "path", p.path, "err", p.launchCause(err))
		if !p.awaitBinaryChange(old, stamp) {
			return
		}
	}
}

// launchCause is err, a failed launch's, on one line without the
// "pluginhost: plugin NAME (PATH): " prefix that a log record's plugin
// and path attributes already say.
func (p *proc) launchCause(err error) string {
	why := strings.TrimPrefix(err.Error(), fmt.Sprintf("pluginhost: plugin %q (%s): ", p.spec.Name, p.path))
	return strings.Join(strings.Fields(why), " ")
}

// drainHandedOver waits, up to handoverDrain, until the old process of a
// handover (old, its client and cmd, pid) has no call in flight, then
// stops it and logs the handover done (newPid took over; began: when it
// was asked for).
func (p *proc) drainHandedOver(old *startTail, client *plugin.Client, cmd *exec.Cmd, pid, newPid int, began time.Time) {
	// A call that read the old client just before the switch may start a
	// moment later: the old process counts as drained once it has had no
	// call in flight for settle.
	const settle = 50 * time.Millisecond
	deadline := time.Now().Add(handoverDrain)
	var idle time.Time
	for time.Now().Before(deadline) {
		if old.inflight.Load() > 0 {
			idle = time.Time{}
		} else if idle.IsZero() {
			idle = time.Now()
		} else if time.Since(idle) >= settle {
			break
		}
		select {
		case <-p.h.done:
			deadline = time.Now() // closing: stop it now
		case <-time.After(5 * time.Millisecond):
		}
	}
	left := old.inflight.Load()
	if p.h.closing() {
		old.stoppedByHost("the host is closing")
	} else {
		old.stoppedByHost(fmt.Sprintf("handed over to pid %d", newPid))
	}
	stopProcess(client, cmd, killGrace)
	p.log.Info("plugin handover done: the old process was stopped", "old_pid", pid, "pid", newPid,
		"took", time.Since(began).Round(time.Millisecond), "calls_cut", left)
}

// checksumError is a plugin binary whose sha256 is not the one its
// declaration pins.
type checksumError struct{ want, got string }

func (e *checksumError) Error() string {
	return fmt.Sprintf("sha256 mismatch: expected %s, actual %s; refusing to start it", e.want, e.got)
}

// awaitChecksum handles a restart refused because the binary's sha256 is
// no longer the pinned one (replaced in place, say by an upgrade): no
// process is started and the restart is not retried blindly. The plugin
// is marked failed (GaveUp: serve unregisters what depends on it) with
// what to do, logged once, and the file is checked every max backoff
// (10 s by default) without starting it; once its sha256 is the pinned
// one again it is launched, and the launch's outcome returned (nil: it
// runs). A new mismatching sum is logged once more. Returns the host's
// closing as an error.
func (p *proc) awaitChecksum(err error, sum *checksumError) error {
	every := p.h.maxBackoff
	what := fmt.Sprintf("%v; the binary changed since %s pinned it: put back the binary whose sha256 is %s, "+
		"or set this plugin's sha256 in %s to %s and restart airnode; the host checks the file every %v and starts the plugin once it matches",
		err, p.h.configFile, sum.want, p.h.configFile, sum.got, every)
	p.mu.Lock()
	p.setStateLocked(StateFailed, what, nil)
	p.sumMismatch = true
	p.mu.Unlock()
	p.log.Error("plugin not restarted: its binary's sha256 is not the pinned one", "expected", sum.want, "actual", sum.got,
		"check_every", every, "path", p.path)
	for {
		select {
		case <-p.h.done:
			return errors.New("host is closing")
		case <-time.After(every):
		}
		got, ferr := fileSHA256(p.path)
		if ferr != nil || got != sum.want {
			if ferr == nil && got != sum.got {
				sum.got = got
				p.log.Error("plugin binary changed again; its sha256 is still not the pinned one", "expected", sum.want, "actual", got)
			}
			continue
		}
		p.log.Info("plugin binary's sha256 is the pinned one again; starting it", "sha256", got)
		p.mu.Lock()
		p.restartsTotal++
		p.mu.Unlock()
		p.launchMu.Lock()
		err := p.launch(context.Background())
		p.launchMu.Unlock()
		var again *checksumError
		if errors.As(err, &again) { // replaced between the check and the launch
			sum = again
			continue
		}
		return err
	}
}

// backoffLocked is the delay before the next restart after restarts quick
// exits: backoff·2^restarts, capped.
func (p *proc) backoffLocked() time.Duration {
	d := p.h.backoff
	for i := 0; i < p.restarts && d < p.h.maxBackoff; i++ {
		d *= 2
	}
	return min(d, p.h.maxBackoff)
}

// stop kills the process (graceful first) and marks the plugin stopped.
func (p *proc) stop() {
	p.mu.Lock()
	client, cmd, tail := p.client, p.cmd, p.tail
	p.mu.Unlock()
	if client != nil {
		tail.stoppedByHost("the host is closing")
		stopProcess(client, cmd, killGrace)
	}
	p.deadlines.stop()
	p.mu.Lock()
	if p.state != StateFailed && p.state != StateNotStarted && p.state != StateChecked {
		p.setStateLocked(StateStopped, "host closed", nil)
	}
	p.mu.Unlock()
}

// register adds the plugin's extension to its catalog.
func (p *proc) register(c *extension.Catalogs) error {
	origin := extension.Origin(p.path)
	name := p.spec.Name
	var err error
	var existing extension.Origin
	var taken bool
	never := p.neverStarted()
	switch p.spec.Point {
	case extension.PointLoadBalance:
		existing, taken = c.LoadBalance.Origin(name)
		if !taken && never {
			err = c.LoadBalance.Register(unstartedLoadBalance{unstarted{p}}, origin)
		} else if !taken {
			onFallback, onBack := pluginrpc.FallbackLog(p.log)
			err = c.LoadBalance.Register(pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{
				Name:   name,
				Source: p,
				Fallback: func(u spi.URL) (spi.LoadBalance, error) {
					b, err := c.LoadBalance.Get(c.LoadBalance.Default())
					if err != nil {
						return nil, err
					}
					return b.Build(u)
				},
				OnFallback:  onFallback,
				OnBack:      onBack,
				OnBypass:    p.warnBypass,
				OnSlow:      slowWarner(p.log),
				WithoutArgs: p.description().WithoutArgs,
				Keys:        p.description().Keys,
			}), origin)
		}
	case extension.PointRegistry:
		existing, taken = c.Registry.Origin(name)
		if !taken && never {
			err = c.Registry.Register(unstartedRegistry{unstarted{p}}, origin)
		} else if !taken {
			err = c.Registry.Register(pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: name, Source: p, Keys: p.description().Keys}), origin)
		}
	case extension.PointFilter:
		existing, taken = c.Filter.Origin(name)
		if !taken && never {
			err = c.Filter.Register(unstartedFilter{unstarted{p}}, origin)
		} else if !taken {
			err = c.Filter.Register(pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{
				Name: name, Activation: p.description().Activation, Source: p, Keys: p.description().Keys,
				WithoutArgs: p.description().WithoutArgs, Chain: p.description().Chain, Required: p.spec.Required, Log: p.log, OnDeadline: p.deadlines.warn}), origin)
		}
	default:
		return nil // services are exported by the node, not catalogued
	}
	if taken {
		if existing == extension.Bundled {
			return fmt.Errorf("pluginhost: plugin %q (%s) may not shadow the bundled %s %q; rename the plugin", name, p.path, p.spec.Point, name)
		}
		// existing is another plugin's path or an in-process extension's
		// origin (its Go package, cli.WithExtensions)
		return fmt.Errorf("pluginhost: plugin %q (%s) may not shadow the %s %q registered by %s; rename the plugin", name, p.path, p.spec.Point, name, existing)
	}
	if err != nil {
		return fmt.Errorf("pluginhost: plugin %q (%s): %w", name, p.path, err)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var _ pluginrpc.DescribedSource = (*proc)(nil)

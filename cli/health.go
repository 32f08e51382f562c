package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// serveHealth is what `airnode serve` knows of its own readiness, served
// by --metrics as /ready, /live, airnode_ready, airnode_draining,
// airnode_plugin_up and the "health" of /stats (metrics.Health): the
// node's state (starting until every service is exported and
// registered, serving, draining from the first signal on), the
// registries the node built (a registry that implements
// spi.RegistryHealth and says its entries are lost is a warning, in
// /stats and airnode_health_warning{check="registry"}, not a reason to
// be unready: a ZooKeeper outage longer than session.timeout reaches
// every provider at once, and a 503 from all of them would turn it into
// an outage of the data plane behind any load balancer polling /ready,
// while the consumers already connected keep calling
// them), and the services that depend on a plugin (a service plugin's
// services, and every service whose provider filter chain holds a filter
// plugin), which it unregisters when the plugin host gives up on that
// plugin (an exit under restart: never, a binary whose sha256 no longer
// matches at a restart) and registers again should the plugin run
// again: a provider that cannot serve a service does not stay in the
// registry answering SERVICE_NOT_FOUND, or SERVER_ERROR from a filter that
// fails closed, to every consumer that picks it (Dubbo's provider
// unregisters a service it unexports). While a plugin a service depends
// on does not run (restarting, a restart failing again and again, failed,
// stopped) the node is not ready: every call of that service fails, so
// /ready answers 503 and airnode_ready is 0, naming the service and why
// in the words of its airnode.Health reason (sync sets both at once). An
// unresponsive plugin is a warning only: it may be merely slow.
type serveHealth struct {
	health  *metrics.Health
	plugins *pluginhost.Host
	cat     *extension.Catalogs
	regs    *registryTap
	logger  *slog.Logger

	mu      sync.Mutex
	exports []*pluginExport

	stopOnce sync.Once
	quit     chan struct{} // closed by stopWatching
	exited   chan struct{} // closed when the watcher has returned (or never ran)
	cancel   context.CancelFunc
}

// pluginExport is one exported service that depends on plugins.
type pluginExport struct {
	plugins    []string // its service plugin, then the filter plugins of its provider chain
	exp        *kernel.Exporter
	regURL     spi.URL // the registry it is registered in (zero: none)
	registered bool    // guarded by serveHealth.mu
	// unavailable says why every call of the service fails (a plugin it
	// depends on does not run), the part of its airnode.Health reason
	// that makes the node not ready; "" while they all run. Guarded by
	// serveHealth.mu; set by sync.
	unavailable string
}

// newServeHealth returns serve's health in metrics.NodeStarting. It wraps
// cat's registry builders (registryTap) so that it learns the registries
// the node builds from now on: call it before kernel.NewNode.
func newServeHealth(cat *extension.Catalogs, plugins *pluginhost.Host, logger *slog.Logger) *serveHealth {
	h := &serveHealth{health: metrics.NewHealth(), plugins: plugins, cat: cat, regs: &registryTap{}, logger: logger,
		quit: make(chan struct{}), exited: make(chan struct{})}
	h.health.SetState(metrics.NodeStarting, "exporting and registering services")
	cat.Registry.Wrap(h.regs.wrap)
	h.health.AddWarning("registry", h.regs.health)
	h.health.AddCheck("plugin", h.servicesUnavailable)
	h.health.AddWarning("plugin", h.pluginsUnresponsive)
	h.health.SetPlugins(func() []metrics.PluginUp {
		var out []metrics.PluginUp
		for _, i := range plugins.Plugins() {
			up := i.State == pluginhost.StateRunning
			out = append(out, metrics.PluginUp{Name: i.Name, Up: up, Unresponsive: up && i.Unresponsive,
				Restarts: i.RestartsTotal, LastExit: i.LastExit})
		}
		return out
	})
	return h
}

// exported records exp, exported for pe; an export that depends on a
// plugin (a service plugin's, or one whose chain holds a filter plugin) is
// watched (sync). reg is the node's default registry (zero: none).
func (h *serveHealth) exported(pe plannedExport, exp *kernel.Exporter, reg spi.URL) {
	var deps []string
	if pe.plugin != nil {
		deps = append(deps, pe.plugin.Plugin)
	}
	deps = append(deps, h.filterPlugins(exp.URL())...)
	if len(deps) == 0 {
		return
	}
	regURL := reg
	if v, ok := pe.url.Param("registry"); ok && v != "" {
		if u, err := spi.Parse(v); err == nil { // Export parsed it already
			regURL = u
		}
	}
	h.mu.Lock()
	h.exports = append(h.exports, &pluginExport{plugins: deps, exp: exp, regURL: regURL, registered: !regURL.IsZero()})
	h.mu.Unlock()
}

// filterPlugins names the filter plugins in u's provider filter chain
// (service level and each method's).
func (h *serveHealth) filterPlugins(u spi.URL) []string {
	isPlugin := map[string]bool{}
	for _, i := range h.plugins.Plugins() {
		if i.Point == extension.PointFilter {
			isPlugin[i.Name] = true
		}
	}
	if len(isPlugin) == 0 {
		return nil
	}
	var out []string
	for _, m := range append([]string{""}, strings.Split(u.ParamOr(spi.KeyMethods, ""), ",")...) {
		names, _ := extension.FilterNames(h.cat.Filter, u, spi.Provider, m)
		for _, n := range names {
			if isPlugin[n] && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// gaveUpOn returns the first of plugins the host gave up on.
func gaveUpOn(plugins []string, gaveUp map[string]pluginhost.PluginInfo) (pluginhost.PluginInfo, bool) {
	for _, p := range plugins {
		if i, ok := gaveUp[p]; ok {
			return i, true
		}
	}
	return pluginhost.PluginInfo{}, false
}

// downReason is the airnode.Health reason of a service whose plugins
// (in its dependency order) are in down: each of them that is, `service
// plugin "greeter" running: unresponsive: ...`, joined by "; " (tester71
// #6: naming the first alone hid a second frozen plugin until the first
// answered again). "" when none is.
func downReason(plugins []string, down map[string]pluginhost.PluginInfo) string {
	var why []string
	for _, p := range plugins {
		if i, ok := down[p]; ok {
			why = append(why, fmt.Sprintf("%s plugin %q %s", i.Point, i.Name, i.StateString()))
		}
	}
	return strings.Join(why, "; ")
}

// serving marks the node ready to serve (every service exported and
// registered) and starts the goroutine watching the service plugins,
// which stopWatching stops.
func (h *serveHealth) serving() {
	h.health.SetState(metrics.NodeServing, "")
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.exited)
		for {
			changed := h.plugins.Changed()
			h.sync(ctx)
			select {
			case <-changed:
			case <-h.quit:
				return
			}
		}
	}()
}

// draining marks the node draining (why: the signal that ended ctx) and
// stops the plugin watcher: from here on the node's shutdown unregisters
// everything. Call it before the node's Shutdown, so that /ready answers
// 503 before anything is unregistered or stops listening.
func (h *serveHealth) draining(ctx context.Context) {
	why := "shutting down"
	if sig, ok := signalOf(ctx); ok {
		why = signalName(sig) + " received, shutting down"
	}
	h.health.SetState(metrics.NodeDraining, why)
	h.plugins.ShuttingDown() // a plugin's SIGTERM (systemd's, to every process) starts no handover now
	h.stopWatching()
}

// stopWatching stops the plugin watcher, cutting short a registry call it
// is in, and waits for it. Idempotent; safe when serving never ran.
func (h *serveHealth) stopWatching() {
	h.stopOnce.Do(func() {
		close(h.quit)
		if h.cancel == nil {
			close(h.exited)
			return
		}
		h.cancel()
	})
	<-h.exited
}

// registryCallTimeout bounds one Unregister or Register of the watcher.
const registryCallTimeout = 10 * time.Second

// sync unregisters the services of the plugins the host gave up on and
// registers again those of plugins that run again; it marks a service
// not serving for kernel.HealthService while one of its plugins does not
// run (restarting, failed, stopped) or is unresponsive (its process
// answers no liveness ping), serving again once they all run and answer,
// and the node not ready (servicesUnavailable) while one does not run.
func (h *serveHealth) sync(ctx context.Context) {
	gaveUp := map[string]pluginhost.PluginInfo{}
	notRunning := map[string]pluginhost.PluginInfo{}
	stopped := map[string]pluginhost.PluginInfo{}
	for _, i := range h.plugins.Plugins() {
		if i.GaveUp() {
			gaveUp[i.Name] = i
		}
		if i.State != pluginhost.StateRunning || i.Unresponsive {
			notRunning[i.Name] = i
		}
		if i.State != pluginhost.StateRunning {
			stopped[i.Name] = i
		}
	}
	h.mu.Lock()
	exports := append([]*pluginExport(nil), h.exports...)
	h.mu.Unlock()
	for _, pe := range exports {
		// airnode.Health: NOT_SERVING while a plugin it depends on does
		// not run (restarting too: its calls fail meanwhile) or does
		// not answer the host's liveness pings (unresponsive); /ready:
		// 503 while one does not run
		why := downReason(pe.plugins, notRunning)
		pe.exp.SetServing(why == "", why)
		info, down := gaveUpOn(pe.plugins, gaveUp)
		h.mu.Lock()
		pe.unavailable = downReason(pe.plugins, stopped)
		registered := pe.registered
		h.mu.Unlock()
		if down == !registered || pe.regURL.IsZero() {
			continue
		}
		reg := h.regs.get(pe.regURL)
		if reg == nil {
			h.logger.Warn("airnode serve: cannot find the registry of a service plugin's export", "service", pe.exp.URL().ServiceKey(), "registry", registryDesc(pe.regURL))
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, registryCallTimeout)
		var err error
		if down {
			err = reg.Unregister(cctx, pe.exp.URL())
		} else {
			err = reg.Register(cctx, pe.exp.URL())
		}
		cancel()
		service := pe.exp.URL().ServiceKey()
		kind, plugin := info.Point+" plugin", info.Name
		if !down {
			kind, plugin = "plugin", strings.Join(pe.plugins, ",")
		}
		switch {
		case err != nil && down:
			h.logger.Error("airnode serve: "+kind+" is down for good, and unregistering its service failed: consumers may still pick this provider", "plugin", plugin, "service", service, "err", err)
		case err != nil:
			h.logger.Error("airnode serve: "+kind+" runs again, and registering its service failed", "plugin", plugin, "service", service, "err", err)
		case down && info.Point == pluginhost.PointService:
			h.logger.Warn("airnode serve: service plugin is down for good: its service is unregistered (calls by address answer SERVICE_NOT_FOUND) and /ready answers 503 until it runs again",
				"plugin", plugin, "service", service, "plugin_state", info.StateString())
		case down:
			h.logger.Warn("airnode serve: "+kind+" is down for good: the service whose filter chain holds it is unregistered (calls by address fail, as the filter fails closed) and /ready answers 503 until it runs again",
				"plugin", plugin, "service", service, "plugin_state", info.StateString())
		default:
			// info: it ends the incident the WARN above began (a count-WARN
			// alert must not fire on the recovery; tester72 #6)
			h.logger.Info("airnode serve: plugin runs again: its service is registered again", "plugins", plugin, "service", service)
		}
		if err == nil {
			h.mu.Lock()
			pe.registered = !down
			h.mu.Unlock()
		}
	}
}

// servicesByPlugin returns, for each plugin name, the service keys of the
// exports that depend on it.
func (h *serveHealth) servicesByPlugin() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	services := map[string][]string{}
	for _, pe := range h.exports {
		for _, p := range pe.plugins {
			services[p] = append(services[p], pe.exp.URL().ServiceKey())
		}
	}
	return services
}

// servicesUnavailable is the readiness check of the services that depend
// on plugins: an error naming each exported service that cannot serve
// because a plugin it depends on does not run (restarting, failed,
// stopped), with its airnode.Health reason, as sync last set it:
// `demo.Echo: filter plugin "acme.authz" restarting: ...`. A provider
// whose every call of a service fails is not ready, whether the host gave
// up on the plugin or retries a restart that keeps failing.
func (h *serveHealth) servicesUnavailable() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var down []string
	for _, pe := range h.exports {
		if pe.unavailable != "" {
			down = append(down, pe.exp.URL().ServiceKey()+": "+pe.unavailable)
		}
	}
	if len(down) == 0 {
		return nil
	}
	return errors.New(strings.Join(down, "; "))
}

// pluginsUnresponsive is the health warning of unresponsive plugins
// (/stats' warnings, airnode_health_warning{check="plugin"}): an error
// naming each running plugin whose process answers no liveness ping,
// how long, and the exported services that depend on it: `"greeter"
// running: unresponsive: its process has answered no liveness ping for
// 6s (services greeter.Greeter)`. A warning, not a readiness check: the
// plugin may be merely slow, its services stay registered, and the
// node's other services still serve (/ready stays 200).
func (h *serveHealth) pluginsUnresponsive() error {
	services := h.servicesByPlugin()
	var silent []string
	for _, i := range h.plugins.Plugins() {
		if !i.Unresponsive || i.State != pluginhost.StateRunning {
			continue
		}
		w := fmt.Sprintf("%q %s", i.Name, i.StateString())
		if s := services[i.Name]; len(s) > 0 {
			w += " (services " + strings.Join(s, ", ") + ")"
		}
		silent = append(silent, w)
	}
	if len(silent) == 0 {
		return nil
	}
	return errors.New(strings.Join(silent, "; "))
}

// registryTap learns the registries the node builds: a wrapper of the
// catalog's registry builders (extension.Point.Wrap) whose Build returns
// the registry it built unchanged (its optional interfaces, such as
// spi.LoggerUser, stay visible to the kernel) and records it under its
// URL, as the kernel keys its registries. Safe for concurrent use.
type registryTap struct {
	mu   sync.Mutex
	regs map[string]spi.Registry // by registry URL string
	keys []string                // in the order built
}

// wrap is the catalog wrapper.
func (t *registryTap) wrap(b spi.RegistryBuilder) spi.RegistryBuilder {
	return tappedBuilder{RegistryBuilder: b, tap: t}
}

// get returns the registry built for u, nil when none was.
func (t *registryTap) get(u spi.URL) spi.Registry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.regs[u.String()]
}

// health returns the errors of the registries built that implement
// spi.RegistryHealth and say their entries are lost, joined; nil when
// none does.
func (t *registryTap) health() error {
	t.mu.Lock()
	var errs []string
	for _, k := range t.keys {
		if rh, ok := t.regs[k].(spi.RegistryHealth); ok {
			if err := rh.Health(); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	t.mu.Unlock()
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// tappedBuilder is a registry builder that records what it builds. It
// forwards the builder's optional interfaces serve and the kernel ask
// for (spi.RegistryReacher, spi.ReadOnlyRegistry), answering as their
// absence would; the catalog asks the registered builder itself for its
// keys (spi.KeyDescriber).
type tappedBuilder struct {
	spi.RegistryBuilder
	tap *registryTap
}

// Build builds the registry and records it.
func (b tappedBuilder) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.RegistryBuilder.Build(u)
	if err != nil {
		return nil, err
	}
	b.tap.mu.Lock()
	if b.tap.regs == nil {
		b.tap.regs = map[string]spi.Registry{}
	}
	k := u.String()
	if _, ok := b.tap.regs[k]; !ok {
		b.tap.keys = append(b.tap.keys, k)
	}
	b.tap.regs[k] = r
	b.tap.mu.Unlock()
	return r, nil
}

// Reach forwards spi.RegistryReacher (ReachShared when absent).
func (b tappedBuilder) Reach() spi.RegistryReach {
	if r, ok := b.RegistryBuilder.(spi.RegistryReacher); ok {
		return r.Reach()
	}
	return spi.ReachShared
}

// ReadOnly forwards spi.ReadOnlyRegistry (false when absent).
func (b tappedBuilder) ReadOnly() bool {
	ro, ok := b.RegistryBuilder.(spi.ReadOnlyRegistry)
	return ok && ro.ReadOnly()
}

var (
	_ spi.RegistryBuilder  = tappedBuilder{}
	_ spi.RegistryReacher  = tappedBuilder{}
	_ spi.ReadOnlyRegistry = tappedBuilder{}
)

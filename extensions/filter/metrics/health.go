package metrics

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// NodeState is a provider node's serving state, as /ready, /stats and
// airnode_ready report it: starting until its services are registered,
// serving, then draining from the shutdown signal on.
type NodeState string

// Node states, in the order a node goes through them.
const (
	NodeStarting NodeState = "starting"
	NodeServing  NodeState = "serving"
	NodeDraining NodeState = "draining"
)

// PluginUp is one plugin's name, whether its process runs now
// (airnode_plugin_up 1 or 0), whether it runs but answers no liveness
// ping (airnode_plugin_unresponsive 1 or 0), how many times the host
// restarted it (airnode_plugin_restarts_total) and when its process last
// exited without the host asking
// (airnode_plugin_last_exit_timestamp_seconds; zero: never, and the
// series is left out).
type PluginUp struct {
	Name         string
	Up           bool
	Unresponsive bool
	Restarts     int
	LastExit     time.Time
}

// HealthReport is a node's readiness in /stats ("health"): Ready and, when
// it is not, Reason (the body of /ready's 503), the node's State, and
// each plugin's Up (empty without plugins). Every field is in the JSON,
// empty ones too.
type HealthReport struct {
	Ready   bool            `json:"ready"`
	State   NodeState       `json:"state"`
	Reason  string          `json:"reason"`  // "" when ready
	Plugins map[string]bool `json:"plugins"` // {} without plugins
	// PluginRestarts is each plugin's restart count since the node
	// started (airnode_plugin_restarts_total; {} without plugins).
	PluginRestarts map[string]int `json:"plugin_restarts"`
	// Warnings are the failing AddWarning conditions, "name: error",
	// which do not make the node unready ([] when none fails).
	Warnings []string `json:"warnings"`
}

// healthCheck is one named readiness condition (AddCheck).
type healthCheck struct {
	name  string
	check func() error
}

// Health is a provider node's readiness and liveness, served by a metrics
// Server given WithHealth: GET /ready answers 200 "serving" while the
// node is ready and 503 with a one-line reason while it is not, GET
// /live 200 "alive" while the process serves HTTP at all (Kubernetes'
// split: a failed liveness probe restarts the process, a failed
// readiness probe only takes it out of the load balancer; gRPC health's
// SERVING / NOT_SERVING). The node is ready when its state is
// NodeServing and every check added with AddCheck returns nil. A new
// Health is NodeStarting. Safe for concurrent use.
type Health struct {
	mu       sync.Mutex
	state    NodeState
	detail   string // why the state, for Reason ("SIGTERM received")
	checks   []healthCheck
	warnings []healthCheck
	plugins  func() []PluginUp
}

// NewHealth returns a Health in NodeStarting.
func NewHealth() *Health { return &Health{state: NodeStarting} }

// SetState sets the node's state; detail, when not empty, is appended to
// the reason /ready gives while the state is not NodeServing
// ("draining: SIGTERM signal received").
func (h *Health) SetState(s NodeState, detail string) {
	h.mu.Lock()
	h.state, h.detail = s, detail
	h.mu.Unlock()
}

// MarkDraining sets NodeDraining with detail as the reason, unless the
// node is draining already: then it keeps the reason it was given (serve
// marks it with the signal's name before the node's Shutdown). Give the
// Health to the node with kernel.WithHealth and its Shutdown calls this
// first, before it unregisters anything (kernel.Readiness).
func (h *Health) MarkDraining(detail string) {
	h.mu.Lock()
	if h.state != NodeDraining {
		h.state, h.detail = NodeDraining, detail
	}
	h.mu.Unlock()
}

// State returns the node's state.
func (h *Health) State() NodeState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// AddCheck adds a readiness condition: while check returns an error, the
// node is not ready and the reason is "name: error". check is called on
// every /ready, /stats and /metrics request, possibly concurrently; it
// must be cheap and must not block (it reads state, it does no I/O).
func (h *Health) AddCheck(name string, check func() error) {
	h.mu.Lock()
	h.checks = append(h.checks, healthCheck{name, check})
	h.mu.Unlock()
}

// AddWarning adds a condition that is reported but does not make the node
// unready: while check returns an error, /stats' health lists "name:
// error" in Warnings and airnode_health_warning{check=name} is 1. For a
// shared dependency whose failure every node sees at once (a registry
// whose session expired): as a readiness check it would take the whole
// fleet out of its load balancers while the providers still serve
// (Kubernetes' advice: readiness must not depend on shared backends).
// check must be cheap and must not block, as AddCheck's.
func (h *Health) AddWarning(name string, check func() error) {
	h.mu.Lock()
	h.warnings = append(h.warnings, healthCheck{name, check})
	h.mu.Unlock()
}

// warningList returns each AddWarning condition and its error (nil
// while it holds), in the order added.
func (h *Health) warningList() []warningState {
	h.mu.Lock()
	ws := slices.Clone(h.warnings)
	h.mu.Unlock()
	out := make([]warningState, len(ws))
	for i, w := range ws {
		out[i] = warningState{name: w.name, err: w.check()}
	}
	return out
}

// warningState is one AddWarning condition as last checked.
type warningState struct {
	name string
	err  error
}

// SetPlugins sets the function listing the node's plugins, whether
// each runs (airnode_plugin_up, HealthReport.Plugins) and whether it is
// unresponsive (airnode_plugin_unresponsive); called like a check.
func (h *Health) SetPlugins(f func() []PluginUp) {
	h.mu.Lock()
	h.plugins = f
	h.mu.Unlock()
}

// Ready reports whether the node is ready and, when it is not, why: the
// state and its detail ("draining: SIGTERM signal received"), or the
// failing checks joined by "; " ("registry: session expired").
func (h *Health) Ready() (bool, string) {
	h.mu.Lock()
	st, detail, checks := h.state, h.detail, slices.Clone(h.checks)
	h.mu.Unlock()
	if st != NodeServing {
		reason := string(st)
		if detail != "" {
			reason += ": " + detail
		}
		return false, reason
	}
	var why []string
	for _, c := range checks {
		if err := c.check(); err != nil {
			why = append(why, c.name+": "+err.Error())
		}
	}
	return len(why) == 0, strings.Join(why, "; ")
}

// pluginList returns the plugins' states, sorted by name.
func (h *Health) pluginList() []PluginUp {
	h.mu.Lock()
	f := h.plugins
	h.mu.Unlock()
	if f == nil {
		return nil
	}
	ps := f()
	slices.SortFunc(ps, func(a, b PluginUp) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

// Report returns the node's readiness for /stats.
func (h *Health) Report() HealthReport {
	ok, reason := h.Ready()
	rep := HealthReport{Ready: ok, State: h.State(), Reason: reason,
		Plugins: map[string]bool{}, PluginRestarts: map[string]int{}, Warnings: []string{}} // {} and [] in JSON, never absent
	for _, p := range h.pluginList() {
		rep.Plugins[p.Name] = p.Up
		rep.PluginRestarts[p.Name] = p.Restarts
	}
	rep.Warnings = append(rep.Warnings, h.Warnings()...)
	return rep
}

// Warnings returns the failing AddWarning conditions, "name: error" each
// in the order added (HealthReport.Warnings); nil when none fails. The
// health service (airnode.Health) sends them with a SERVING answer
// (kernel.HealthNodeWarningAttachment).
func (h *Health) Warnings() []string {
	var out []string
	for _, w := range h.warningList() {
		if w.err != nil {
			out = append(out, w.name+": "+w.err.Error())
		}
	}
	return out
}

// ReadyHandler serves GET /ready: 200 and "serving" while Ready, else 503
// Service Unavailable and the reason, as one line of plain text, never
// cached.
func (h *Health) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plainText(w)
		ok, reason := h.Ready()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, reason)
			return
		}
		fmt.Fprintln(w, NodeServing)
	})
}

// LiveHandler serves GET /live: 200 and "alive" whatever the state (a
// draining node is alive: a liveness probe that failed during the drain
// would have it killed before its calls end).
func (h *Health) LiveHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plainText(w)
		fmt.Fprintln(w, "alive")
	})
}

// plainText sets the headers of a probe's answer.
func plainText(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
}

// Health series, produced when scraped (healthCollector).
var (
	readyDesc = prometheus.NewDesc("airnode_ready",
		"1 while the node is ready (/ready answers 200: serving, every service exported and its Register accepted by its registry, every plugin a service depends on running), else 0. An entry the registry does not publish (ZooKeeper: queued with check=false while there is no session, a session expired) leaves it 1 and sets airnode_health_warning{check=\"registry\"}.", nil, nil)
	drainingDesc = prometheus.NewDesc("airnode_draining",
		"1 from the shutdown signal until the process exits (/ready answers 503 draining), else 0.", nil, nil)
	warningDesc = prometheus.NewDesc("airnode_health_warning",
		"1 while the named condition fails: reported, but the node stays ready (registry: an entry not published, such as a ZooKeeper session expired or an entry queued for want of a session).", []string{"check"}, nil)
	pluginUpDesc = prometheus.NewDesc("airnode_plugin_up",
		"1 while the plugin's process runs, 0 while it is restarting, failed or stopped.", []string{"plugin"}, nil)
	pluginUnresponsiveDesc = prometheus.NewDesc("airnode_plugin_unresponsive",
		"1 while the plugin's process runs but has answered no liveness ping for the host's bound (5s by default; frozen, SIGSTOP), else 0.", []string{"plugin"}, nil)
	pluginRestartsDesc = prometheus.NewDesc("airnode_plugin_restarts_total",
		"Restarts of the plugin since the node started: each relaunch after an exit the host did not ask for (a crash, a kill, an exit of its own), failed relaunches included, and each handover to a new process (a SIGTERM to an sdk plugin).", []string{"plugin"}, nil)
	pluginLastExitDesc = prometheus.NewDesc("airnode_plugin_last_exit_timestamp_seconds",
		"Unix time when the plugin's process last exited without the host asking; absent while it never did.", []string{"plugin"}, nil)
)

// healthCollector exports h's state to Prometheus.
type healthCollector struct{ h *Health }

func (c healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- readyDesc
	ch <- drainingDesc
	ch <- warningDesc
	ch <- pluginUpDesc
	ch <- pluginUnresponsiveDesc
	ch <- pluginRestartsDesc
	ch <- pluginLastExitDesc
}

func (c healthCollector) Collect(ch chan<- prometheus.Metric) {
	ok, _ := c.h.Ready()
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, boolValue(ok))
	ch <- prometheus.MustNewConstMetric(drainingDesc, prometheus.GaugeValue, boolValue(c.h.State() == NodeDraining))
	for _, w := range c.h.warningList() {
		ch <- prometheus.MustNewConstMetric(warningDesc, prometheus.GaugeValue, boolValue(w.err != nil), w.name)
	}
	for _, p := range c.h.pluginList() {
		ch <- prometheus.MustNewConstMetric(pluginUpDesc, prometheus.GaugeValue, boolValue(p.Up), p.Name)
		ch <- prometheus.MustNewConstMetric(pluginUnresponsiveDesc, prometheus.GaugeValue, boolValue(p.Unresponsive), p.Name)
		ch <- prometheus.MustNewConstMetric(pluginRestartsDesc, prometheus.CounterValue, float64(p.Restarts), p.Name)
		if !p.LastExit.IsZero() {
			ch <- prometheus.MustNewConstMetric(pluginLastExitDesc, prometheus.GaugeValue, float64(p.LastExit.UnixNano())/1e9, p.Name)
		}
	}
}

// boolValue is 1 for true, 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// gatherer returns a registry holding h's series only, gathered next to
// a Registry's (a Registry is shared by the node's filters; h belongs to
// one Server).
func (h *Health) gatherer() prometheus.Gatherer {
	reg := prometheus.NewRegistry()
	reg.MustRegister(healthCollector{h})
	return reg
}

var _ prometheus.Collector = healthCollector{}

package kernel

import (
	"fmt"
	"strings"

	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// HealthService is the service key of the health service every provider
// address serves (gRPC's grpc.health.v1.Health): its one method, Check,
// takes a service key and answers HealthServing, HealthNotServing or
// HealthServiceUnknown for that service on the address called; "" asks
// about the node as a whole. It is served on each listening address,
// beside the services exported there, unless the provider URL key
// health.service is false; it is not registered (no consumer of a
// business service, nor `registry ls`, sees it), runs no provider
// filter (no token, no metrics series, no access log line: a probe is
// not a call of a user service) and costs the calls of other services
// nothing (it is looked for only when no exported service has the key).
// A service exported as "airnode.Health" on the address replaces it; it
// must have a method Check (Export refuses one without: every probe
// would fail).
const HealthService = "airnode.Health"

// HealthCheck is the health service's method: Check(service string)
// string. The argument may also be gRPC's request shape,
// {"service":"demo.Echo"}, or a one-element array ["demo.Echo"]; no
// argument asks about the node.
const HealthCheck = "Check"

// Health statuses, gRPC's names (grpc.health.v1.HealthCheckResponse).
const (
	// HealthServing: the service is exported on the address and serves.
	HealthServing = "SERVING"
	// HealthNotServing: the node is draining (Shutdown began), or the
	// service was marked not serving (Exporter.SetServing: serve does so
	// while a plugin it depends on is not running), or, for the node
	// (""), its readiness (WithHealth) says not ready or every service
	// exported on the address is marked not serving (while only some
	// are, the node is SERVING with HealthWarningAttachment). The
	// answer's "reason" attachment says which.
	HealthNotServing = "NOT_SERVING"
	// HealthServiceUnknown: the service is not exported on the address
	// called (another group or version is another service key).
	HealthServiceUnknown = "SERVICE_UNKNOWN"
)

// HealthReasonAttachment is the response attachment in which a
// NOT_SERVING or SERVICE_UNKNOWN answer says why ("draining: shutting
// down", `plugin "greeter" restarting: ...`).
const HealthReasonAttachment = "reason"

// HealthWarningAttachment is the response attachment in which a SERVING
// answer about the node ("") names the services exported on the address
// called that are marked not serving while others still serve, one
// "service: reason" each, joined by "; " (`greeter.Greeter: service
// plugin "greeter" running: unresponsive: ...`). Absent when every
// service serves. The node answers NOT_SERVING, with these in its
// reason, only once every service exported on the address is not
// serving: as gRPC's health server, whose overall status ("") is not
// that of any one service, it stays SERVING while it still serves some.
const HealthWarningAttachment = "warning"

// HealthNodeWarningAttachment is the response attachment in which a
// SERVING answer, about the node or a service, carries the node's own
// warnings, "check: text" each, joined by "; ": those its readiness
// (WithHealth) reports without being unready, as serve's /stats
// "warnings" and airnode_health_warning do (`registry: zookeeper
// registry ...: provider entries of demo.Echo are not in ZooKeeper:
// queued, ...`). Absent when there are none, and from NOT_SERVING and
// SERVICE_UNKNOWN answers (their reason says why). A warning, not a
// status: the answer stays SERVING. An attachment more, so a client that
// does not know it reads the answer as before.
const HealthNodeWarningAttachment = "node.warning"

// warningReporter is the optional interface of a Readiness (WithHealth)
// whose warnings the health service sends with a SERVING answer
// (HealthNodeWarningAttachment): metrics.Health's Warnings.
type warningReporter interface {
	Warnings() []string
}

// keyHealthService turns the health service of a listening address off
// (false); per listening address. Bool, default true.
const keyHealthService = "health.service"

// readyReporter is the optional interface of a Readiness (WithHealth)
// that the health service asks about the node as a whole:
// metrics.Health's Ready, /ready's answer.
type readyReporter interface {
	Ready() (bool, string)
}

// healthEnabled reads keyHealthService from provider URL pu.
func healthEnabled(pu spi.URL) (bool, error) {
	on, err := pu.Bool(keyHealthService, true)
	if err != nil {
		v, _ := pu.Param(keyHealthService)
		return false, &spi.ParamError{Key: keyHealthService, Value: v, Want: "true (the default: serve " + HealthService + " on the address) or false"}
	}
	return on, nil
}

// SetServing marks the exported service serving or not for the health
// service (Check answers NOT_SERVING with reason while it is not),
// as gRPC's health server's SetServingStatus does; calls of the service
// are served as before, and its registry entry is untouched. serve
// marks a service not serving while a plugin it depends on is not
// running. Safe for concurrent use.
func (e *Exporter) SetServing(serving bool, reason string) {
	if serving {
		e.notServing.Store(nil)
		return
	}
	if reason == "" {
		reason = "marked not serving"
	}
	e.notServing.Store(&reason)
}

// healthService answers Check for the services of one server.
type healthService struct {
	n *Node
	s *server
}

// serve answers one request to HealthService (service).
func (h *healthService) serve(_ *providerCall, req *exchange.Request) spi.Result {
	if req.Method != HealthCheck {
		return rejected(noMethodError(HealthService, req.Method, []string{HealthCheck}))
	}
	var key string
	switch {
	case req.NumArgs == 0:
	case req.NumArgs == 1:
		var v any
		if err := req.Args.Decode(&v); err != nil {
			return rejected(argError(HealthService, HealthCheck, 0, "string", err))
		}
		k, ok := healthArgument(v)
		if !ok {
			return rejected(spi.Errorf(spi.StatusBadRequest, "%s.%s argument 0: want a service key string (\"demo.Echo\", \"group/demo.Echo:1.0\"; \"\" for the node), {\"service\": KEY} or [KEY]; got %s",
				HealthService, HealthCheck, describeArg(v)))
		}
		key = k
	default:
		return rejected(spi.Errorf(spi.StatusBadRequest, "%s.%s takes one argument, the service key (\"\" for the node): got %d", HealthService, HealthCheck, req.NumArgs))
	}
	status, reason, warning := h.check(key)
	var nodeWarning string
	if r, ok := h.n.health.(warningReporter); ok && status == HealthServing {
		nodeWarning = strings.Join(r.Warnings(), "; ")
	}
	res := spi.Result{Value: status}
	if reason != "" || warning != "" || nodeWarning != "" {
		res.Attachments = map[string]string{}
	}
	if reason != "" {
		res.Attachments[HealthReasonAttachment] = reason
	}
	if warning != "" {
		res.Attachments[HealthWarningAttachment] = warning
	}
	if nodeWarning != "" {
		res.Attachments[HealthNodeWarningAttachment] = nodeWarning
	}
	return res
}

// healthArgument returns the service key of Check's argument v: a
// string, {"service": string} or [string].
func healthArgument(v any) (string, bool) {
	switch a := v.(type) {
	case nil:
		return "", true
	case string:
		return a, true
	case []byte:
		return string(a), true
	case []any:
		if len(a) == 1 {
			s, ok := a[0].(string)
			return s, ok
		}
	case map[string]any:
		if s, ok := a["service"].(string); ok && len(a) == 1 {
			return s, true
		}
	case map[string]string:
		if s, ok := a["service"]; ok && len(a) == 1 {
			return s, true
		}
	}
	return "", false
}

// describeArg says what a wrong argument to Check was, for its error.
func describeArg(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return fmt.Sprintf("%T %s", v, s)
}

// check returns the status of key on h's server, why when it is not
// HealthServing, and for the node ("") a warning naming the services
// marked not serving while others serve (HealthWarningAttachment).
func (h *healthService) check(key string) (status, reason, warning string) {
	draining := h.n.draining.Load() != nil || h.s.closed.Load()
	if key == "" || key == HealthService {
		if key == "" {
			if r, ok := h.n.health.(readyReporter); ok {
				if ready, why := r.Ready(); !ready {
					return HealthNotServing, why, ""
				}
			}
		}
		if draining {
			return HealthNotServing, h.drainingReason(), ""
		}
		if key == "" {
			down, total := h.notServing()
			if len(down) > 0 && len(down) == total {
				return HealthNotServing, fmt.Sprintf("no service exported on %s:%d serves: %s", h.s.host, h.s.port, strings.Join(down, "; ")), ""
			}
			return HealthServing, "", strings.Join(down, "; ")
		}
		return HealthServing, "", ""
	}
	h.s.mu.RLock()
	_, ok := h.s.services[key]
	h.s.mu.RUnlock()
	if !ok {
		same, all := h.s.exportedHere(key)
		return HealthServiceUnknown, fmt.Sprintf("%s is not exported on %s:%d%s", key, h.s.host, h.s.port, exportedHint(key, same, all)), ""
	}
	if draining {
		return HealthNotServing, h.drainingReason(), ""
	}
	h.n.mu.Lock()
	exporters := h.n.exporters
	h.n.mu.Unlock()
	for _, e := range exporters {
		if e.srv != h.s || e.key != key {
			continue
		}
		if e.gone.Load() {
			return HealthNotServing, "unexported", ""
		}
		if why := e.notServing.Load(); why != nil {
			return HealthNotServing, *why, ""
		}
	}
	return HealthServing, "", ""
}

// notServing returns the services exported on h's server that are marked
// not serving (Exporter.SetServing), "service: reason" each in export
// order, and how many services are exported there (unexported ones
// left out).
func (h *healthService) notServing() (down []string, total int) {
	h.n.mu.Lock()
	exporters := h.n.exporters
	h.n.mu.Unlock()
	for _, e := range exporters {
		if e.srv != h.s || e.gone.Load() {
			continue
		}
		total++
		if why := e.notServing.Load(); why != nil {
			down = append(down, e.key+": "+*why)
		}
	}
	return down, total
}

// drainingReason says why a draining node does not serve: its
// readiness's reason when it has one ("draining: SIGTERM received,
// shutting down"), else "draining: the node is shutting down".
func (h *healthService) drainingReason() string {
	if r, ok := h.n.health.(readyReporter); ok {
		if ready, why := r.Ready(); !ready && strings.HasPrefix(why, "draining") {
			return why
		}
	}
	return "draining: the node is shutting down"
}

// healthFor returns the server's health service, nil when
// keyHealthService turns it off.
func (n *Node) healthFor(s *server, on bool) service {
	if !on {
		return nil
	}
	return &healthService{n: n, s: s}
}

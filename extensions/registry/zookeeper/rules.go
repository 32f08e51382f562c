package zookeeper

import (
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// RuleChange is a Dubbo Admin rule for a watched interface written or
// changed while a consumer runs, which airnode does not apply
// (OnRuleChange).
type RuleChange struct {
	Interface string // the subscribed interface
	Path      string // the rule's node
	// Rule is the rule as Dubbo Admin wrote it: a Dubbo 2.6 override or
	// route's URL (override://127.0.0.1:29001/demo.Echo?disabled=true),
	// or a Dubbo 2.7/3 config-center rule's key (demo.Echo.configurators).
	Rule    string
	Changed bool // an existing config-center rule's content changed (false: a new rule)
}

// Rule warnings are bounded per interface: at most ruleBurst at once,
// then one per ruleEvery; those over it are counted in the next one.
const (
	ruleBurst = 5
	ruleEvery = 10 * time.Second
)

// OnRuleChange makes the registry call fn, on a goroutine it owns, for
// every Dubbo Admin rule of a subscribed interface written or changed
// while the subscription runs (as the Warn it logs says; the same rate
// bound applies). fn must not block. Set it before the first Subscribe;
// registry watch prints the changes.
func (r *Registry) OnRuleChange(fn func(RuleChange)) {
	r.mu.Lock()
	r.ruleHook = fn
	r.mu.Unlock()
}

// rules watches the Dubbo Admin rules of w's interface while w runs
// (the nodes warnOverrides reads at the first subscription:
// <interface>/configurators and routers, and the config center's
// rules for the interface), with child watches of those nodes, exists
// watches of those missing and data watches of the interface's
// config-center rule nodes: no polling. A rule that appears, or a
// config-center rule whose content changes, is said once at Warn (rate
// bounded: ruleBurst, then one per ruleEvery) and given to OnRuleChange's
// function. Those there at the start were said by warnOverrides. Only the
// watch that fired is armed again. It returns when w stops.
func (w *watch) rules() {
	r := w.reg
	var (
		armed  = map[string]<-chan zk.Event{} // "c"+node (children or exists) or "d"+node (data) -> its watch
		listed = map[string][]string{}        // rules node -> the rules under it as last listed (node paths)
		vers   = map[string]int32{}           // config-center rule node -> its data version as last read
		seen   map[string]int32               // rule node -> version said (or, at the start, found)
		tokens = ruleBurst
		refill = time.Now()
		over   int
	)
	legacy := []string{r.categoryPath(w.iface, "configurators"), r.categoryPath(w.iface, "routers")}
	center := r.p.root + configCenterPath
	for {
		if !r.waitUpOr(w.quit, nil, 0) {
			return
		}
		r.mu.Lock()
		conn, next := r.conn, r.upCh
		r.mu.Unlock()
		app := w.app
		for _, node := range append(legacy, center) {
			if armed["c"+node] != nil {
				continue
			}
			children, _, ch, err := conn.ChildrenW(node)
			if errors.Is(err, zk.ErrNoNode) {
				_, _, ch, err = conn.ExistsW(node) // fires at its creation
				children = nil
			}
			if err != nil {
				continue // no session: armed again with the next one
			}
			armed["c"+node] = ch
			if node == center {
				children = configCenterRules(children, w.iface, app)
			}
			paths := make([]string, 0, len(children))
			for _, c := range children {
				paths = append(paths, node+"/"+c)
			}
			listed[node] = paths
		}
		for _, p := range listed[center] {
			if armed["d"+p] != nil {
				continue
			}
			_, stat, ch, err := conn.GetW(p)
			if err != nil {
				continue
			}
			armed["d"+p], vers[p] = ch, stat.Version
		}
		found := map[string]int32{}
		for _, node := range append(legacy, center) {
			for _, p := range listed[node] {
				found[p] = vers[p]
			}
		}
		if seen != nil {
			for p, v := range found {
				old, had := seen[p]
				if had && old >= v {
					continue
				}
				if now := time.Now(); tokens < ruleBurst && now.Sub(refill) >= ruleEvery {
					tokens, refill = min(ruleBurst, tokens+int(now.Sub(refill)/ruleEvery)), now
				}
				if tokens == 0 {
					over++
					continue
				}
				tokens--
				w.ruleChanged(p, had, over)
				over = 0
			}
		}
		seen = found
		// wait for any watch, the next session or the end
		cases := []reflect.SelectCase{
			{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.quit)},
			{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(next)},
		}
		keys := []string{"", ""}
		for k, ch := range armed {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
			keys = append(keys, k)
		}
		i, _, _ := reflect.Select(cases)
		switch i {
		case 0:
			return
		case 1: // a new session: zk ended the old one's watches
			clear(armed)
		default:
			delete(armed, keys[i])
		}
	}
}

// ruleChanged says once, at Warn, that the rule at node p was written
// (changed: an existing config-center rule's content changed) while
// consumers run, and gives it to OnRuleChange's function; over is how
// many such changes the rate bound kept quiet before it.
func (w *watch) ruleChanged(p string, changed bool, over int) {
	r := w.reg
	name := p[strings.LastIndexByte(p, '/')+1:]
	rule := name
	if s, err := url.QueryUnescape(name); err == nil {
		rule = s
	}
	what := "written"
	if changed {
		what = "changed"
	}
	args := []any{"interface", w.iface, "rule", rule, "path", p}
	if over > 0 {
		args = append(args, "not_said", strconv.Itoa(over)+" more rule changes (rate bound)")
	}
	r.log.Warn("a Dubbo Admin rule was "+what+" for "+w.iface+" while this consumer runs; airnode does not apply it (overrides' disable and weight, condition and tag routes): take a provider out of rotation by stopping it or restarting it with weight=0", args...)
	r.mu.Lock()
	fn := r.ruleHook
	r.mu.Unlock()
	if fn != nil {
		fn(RuleChange{Interface: w.iface, Path: p, Rule: rule, Changed: changed})
	}
}

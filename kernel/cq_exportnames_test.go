package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester95 #3: Export of a provider URL with a misspelt loadbalance or
// cluster (roundrobn, failbak) exports and publishes them, as any
// loadbalance and cluster it publishes (consumers choose their own), but
// its warning now says that the node has no extension of that name,
// with the available names and a close match, as serve -p's refusal
// does; a name the node has gets no such words.
func TestExportWarnsOfABalancerOrClusterNameTheNodeLacks(t *testing.T) {
	for q, want := range map[string][]string{
		"loadbalance=roundrobn": {`loadbalance=roundrobn is published but has no effect: each consumer chooses its balancer from its own reference URL (call/bench: -p loadbalance=...); this node has no such extension: unknown loadbalance "roundrobn" (available: consistenthash, leastactive, p2c, random, roundrobin, shortestresponse); did you mean "roundrobin"?`},
		"cluster=failovr":       {`cluster=failovr is published but has no effect: each consumer chooses its cluster from its own reference URL (a reference's cluster=..., call/bench: -p cluster=...); a provider's retries, idempotent and forks are its consumers' defaults; this node has no such extension: unknown cluster "failovr" (available: failfast, failover, failsafe, forking); did you mean "failover"?`},
		"loadbalance=roundrobn&cluster=failbak": {
			`loadbalance=roundrobn is published but has no effect: each consumer chooses its balancer from its own reference URL (call/bench: -p loadbalance=...); this node has no such extension: unknown loadbalance "roundrobn"`,
			`this node has no such extension: unknown cluster "failbak" (available: failfast, failover, failsafe, forking)`,
		},
		"Echo.loadbalance=leastactiv": {`Echo.loadbalance=leastactiv is published but has no effect: each consumer chooses its balancer from its own reference URL (call/bench: -p loadbalance=...); this node has no such extension: unknown loadbalance "leastactiv" (available: `},
	} {
		var log logbuf.Buffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		u := spi.MustParse("airnode://127.0.0.1:0/demo.Echo?" + q)
		exp, err := n.Export(ctxT(t), demo.New("p", 100), u)
		if err != nil {
			t.Fatalf("%s: Export: %v (want a warning, not a refusal)", q, err)
		}
		for k, v := range u.Params() {
			if got, _ := exp.URL().Param(k); got != v {
				t.Errorf("%s: exported URL %s has %s=%q, want it published as given", q, exp.URL(), k, got)
			}
		}
		_ = n.Close()
		if lines := strings.Count(log.String(), "level=WARN"); lines != len(want) {
			t.Errorf("%s: %d warnings, want %d:\n%s", q, lines, len(want), log.String())
		}
		text := strings.ReplaceAll(log.String(), `\"`, `"`) // the text handler's quoting
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no warning with %q in:\n%s", q, w, log.String())
			}
		}
	}
	for _, q := range []string{"loadbalance=roundrobin", "cluster=failfast"} {
		var log logbuf.Buffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_ = n.Close()
		if strings.Contains(log.String(), "no such extension") || !strings.Contains(log.String(), "is published but has no effect") {
			t.Errorf("%s: want the no-effect warning without a miss, got:\n%s", q, log.String())
		}
	}
}

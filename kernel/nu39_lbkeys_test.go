package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/spi"
)

// nu39 #1 and #3: a provider's balancer keys (loadbalance, hash.*,
// p2c.decay, at service or method level) and a method-level weight or
// warmup are published but read by nobody: each consumer builds its
// balancer from its own reference URL, and weight is per provider.
// Export says so in one WARN per key; a provider's service-level weight
// and warmup, which consumers read, get none.
func TestNu39_ExportWarnsOfProviderKeysWithNoEffect(t *testing.T) {
	for q, want := range map[string]string{
		"loadbalance=consistenthash":    "loadbalance=consistenthash is published but has no effect: each consumer chooses its balancer from its own reference URL (call/bench: -p loadbalance=...)",
		"Echo.loadbalance=roundrobin":   "Echo.loadbalance=roundrobin is published but has no effect: each consumer chooses its balancer",
		"hash.nodes=5":                  "hash.nodes=5 is published but has no effect: it is a key of the balancer (consistenthash)",
		"methods.Echo.hash.arguments=1": "methods.Echo.hash.arguments=1 is published but has no effect",
		"p2c.decay=5s":                  "p2c.decay=5s is published but has no effect: it is a key of the balancer (p2c)",
		"Echo.weight=0":                 "Echo.weight has no effect: weight is per provider, set weight",
		"methods.Echo.warmup=1s":        "methods.Echo.warmup has no effect: warmup is per provider, set warmup",
		"weight=50&warmup=0":            "",
	} {
		var log logbuf.Buffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_ = n.Close()
		lines := strings.Count(log.String(), "level=WARN")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log.String())
		case want != "" && (lines != 1 || !strings.Contains(log.String(), want)):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, want, log.String())
		}
	}
}

// nu39 #7: a reference's weight, warmup or timestamp (provider keys) is
// refused when malformed, with list --explain's error, and warned about
// once when well formed: consumers read them from the provider's URL.
func TestNu39_ReferChecksProviderKeys(t *testing.T) {
	addr := testaddr.Reserved(t) // nothing listens: Refer does not need a provider
	for q, want := range map[string]string{
		"weight=-1":    `kernel: refer t.Svc: invalid value "-1" for URL key "weight": want an integer ≥ 0`,
		"warmup=abc":   `kernel: refer t.Svc: invalid value "abc" for URL key "warmup": want a duration`,
		"Who.weight=x": `kernel: refer t.Svc: invalid value "x" for URL key "Who.weight"`,
	} {
		n := NewNode(testCatalogs(t), WithLogger(quiet))
		_, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/t.Svc?"+q), spi.URL{})
		_ = n.Close()
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to begin %q", q, err, want)
		}
	}
	for q, key := range map[string]string{"weight=5": "key=weight value=5", "warmup=0": "key=warmup value=0", "loadbalance=roundrobin": ""} {
		lines, log := referWarnings(t, addr, q, "provider key on a reference has no effect")
		switch {
		case key == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log)
		case key != "" && (lines != 1 || !strings.Contains(log, " service=t.Svc "+key+"\n")):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, key, log)
		}
	}
}

// nu39 #8: a balancer key the chosen balancer does not read gets one
// WARN at Refer, as a cluster key another cluster reads does.
func TestNu39_ReferWarnsOfABalancerKeyItsBalancerDoesNotRead(t *testing.T) {
	addr := testaddr.Reserved(t)
	for q, want := range map[string]string{
		"loadbalance=random&hash.nodes=0":                 "key=hash.nodes loadbalance=random read_by=consistenthash",
		"hash.arguments=1":                                "key=hash.arguments loadbalance=random read_by=consistenthash",
		"loadbalance=roundrobin&p2c.decay=5s":             "key=p2c.decay loadbalance=roundrobin read_by=p2c",
		"loadbalance=p2c&shortestresponse.slidePeriod=5s": "key=shortestresponse.slidePeriod loadbalance=p2c read_by=shortestresponse",
		"loadbalance=random&Who.hash.nodes=3":             "key=Who.hash.nodes loadbalance=random read_by=consistenthash",
		"loadbalance=consistenthash&hash.nodes=3":         "",
		"Who.loadbalance=consistenthash&Who.hash.nodes=3": "",
		"loadbalance=consistenthash":                      "",
	} {
		lines, log := referWarnings(t, addr, q, "URL key is read by another balancer")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log)
		case want != "" && (lines != 1 || !strings.Contains(log, " service=t.Svc "+want+"\n")):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, want, log)
		}
	}
}

// referWarnings refers to t.Svc at addr with query q from a node of its
// own, closes both, and returns how many of its log lines contain phrase,
// and the whole log.
func referWarnings(t *testing.T, addr, q, phrase string) (int, string) {
	t.Helper()
	var log logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/t.Svc?"+q), spi.URL{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	_ = r.Close()
	_ = n.Close()
	return strings.Count(log.String(), phrase), log.String()
}

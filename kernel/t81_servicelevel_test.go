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

// tester81 #2: failover reads retry.tokens and retry.ratio from the
// reference URL at service level only. A well-formed method-level form
// gets one WARN at Refer (as a method-level transport does), a malformed
// one is refused as the service-level value is (fix-au), and a
// provider's published value gets one WARN at Export: consumers never
// read it.
func TestT81_RetryBudgetKeysWarnedWhereTheyHaveNoEffect(t *testing.T) {
	addr := testaddr.Reserved(t)
	for q, want := range map[string]string{
		"Sleep.retry.tokens=5":                         `key=Sleep.retry.tokens value=5 why="retry.tokens is read at service level only: cluster failover reads it once per reference, from the reference URL's service-level keys (-p retry.tokens=...)"`,
		"methods.Sleep.retry.tokens=7":                 `key=methods.Sleep.retry.tokens value=7 why="retry.tokens is read at service level only`,
		"Sleep.retry.ratio=0.5":                        `key=Sleep.retry.ratio value=0.5 why="retry.ratio is read at service level only`,
		"Sleep.cluster=failover&Sleep.retry.tokens=10": `key=Sleep.retry.tokens value=10`,
		"retry.tokens=10&retry.ratio=0.5":              "",
		"Sleep.retries=1":                              "",
	} {
		lines, log := referWarnings(t, addr, q, "URL key has no effect per method (ignored)")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s: warned, want no warning:\n%s", q, log)
		case want != "" && (lines != 1 || !strings.Contains(log, want)):
			t.Errorf("%s: want one warning with %q, got:\n%s", q, want, log)
		}
	}
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.DiscardHandler)))
	_, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/t.Svc?methods.Sleep.retry.tokens=abc"), spi.URL{})
	if want := `invalid value "abc" for URL key "methods.Sleep.retry.tokens": want an integer from 0 (no retry budget) to 1000`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("methods.Sleep.retry.tokens=abc: Refer: %v, want an error containing %q", err, want)
	}
	_ = n.Close()
	for q, want := range map[string]string{
		"retry.tokens=10":              "retry.tokens=10 is published but has no effect: cluster failover reads it from each consumer's own reference URL, at service level, and a provider's value is not its consumers' default (call/bench: -p retry.tokens=...)",
		"retry.ratio=0.5":              "retry.ratio=0.5 is published but has no effect: cluster failover reads it",
		"methods.Sleep.retry.tokens=3": "methods.Sleep.retry.tokens=3 is published but has no effect: cluster failover reads it",
		"retries=1":                    "",
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

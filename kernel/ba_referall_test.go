package kernel

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester83 #5: Refer refuses a URL with every bad key at once, each in
// its own words and with its did-you-mean, rather than the first one per
// run; the keys it only warns of (a misspelt key, a Dubbo key) stay
// warnings and are logged.
func TestBA_ReferRefusesEveryBadKeyAtOnce(t *testing.T) {
	var log logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithRegistry(spi.MustParse("memory://ba")))
	defer n.Close()
	_, err := n.Refer(ctxT(t), spi.MustParse("airnode:///example.Greeter?timeout=5x&loadbalance=roundrobn&cluster=failovr&payload=lots&retires=3&mock=true"), spi.URL{})
	if err == nil {
		t.Fatal("Refer: nil error, want every bad key refused")
	}
	for _, want := range []string{
		`unknown loadbalance "roundrobn"`, `did you mean "roundrobin"?`,
		`unknown cluster "failovr"`, `did you mean "failover"?`,
		`"timeout"`, `"5x"`,
		`"payload"`, `"lots"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 4 {
		t.Errorf("want 4 lines, one a refusal, got %d:\n%v", len(lines), err)
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(l, "kernel: refer example.Greeter: ") {
			t.Errorf("line %q lacks the component prefix", l)
		}
	}
	var pe *spi.ParamError
	if !errors.As(err, &pe) {
		t.Errorf("errors.As(*spi.ParamError) false for %v", err)
	}
	for _, w := range []string{"retires", "mock"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("no warning naming %q:\n%s", w, log.String())
		}
	}
	// one bad key: its error alone, unchanged
	_, err = n.Refer(ctxT(t), spi.MustParse("airnode:///example.Greeter?loadbalance=roundrobn"), spi.URL{})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), `kernel: refer example.Greeter: unknown loadbalance "roundrobn"`) {
		t.Errorf("one bad key: got %v", err)
	}
}

// Export checks the same keys with the same code (readInvokerSettings)
// and refuses every bad one at once too, each line naming the service.
func TestBA_ExportRefusesEveryBadKeyAtOnce(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?timeout=5x&payload=lots&Slep.retries=1"))
	if err == nil {
		t.Fatal("Export: nil error, want every bad key refused")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Errorf("want 3 lines, one a refusal, got %d:\n%v", len(lines), err)
	}
	for i, want := range []string{`"lots" for URL key "payload"`, `"5x" for URL key "timeout"`, `did you mean "Sleep"?`} {
		if i < len(lines) && (!strings.HasPrefix(lines[i], "kernel: export demo.Echo: ") || !strings.Contains(lines[i], want)) {
			t.Errorf("line %d = %q, want the prefix and %q", i, lines[i], want)
		}
	}
	var pe *spi.ParamError
	if !errors.As(err, &pe) {
		t.Errorf("errors.As(*spi.ParamError) false for %v", err)
	}
}

package kernel

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// Dubbo's dispatcher names airnode does not offer (message, execution,
// connection) are refused at Export with the allowed values, what the
// Dubbo dispatcher does and the airnode value nearest to it.
func TestDubboDispatcherNamesGetAHint(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	for _, d := range []string{"message", "execution", "connection"} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher="+d))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != "dispatcher" || pe.Value != d {
			t.Fatalf("dispatcher=%s: %v, want a *spi.ParamError for the key", d, err)
		}
		for _, want := range []string{"one of adaptive, all, direct", `Dubbo's "` + d + `" dispatcher`, `the nearest is "all"`, "worker pool"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("dispatcher=%s: %q does not say %q", d, err, want)
			}
		}
		if strings.Contains(err.Error(), "did you mean") {
			t.Errorf("dispatcher=%s: %q guesses a spelling for a Dubbo name", d, err)
		}
	}
	if _, err := Dispatcher(spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher=al")); err == nil || strings.Contains(err.Error(), "Dubbo") {
		t.Errorf("dispatcher=al: %v, want the plain error with no Dubbo hint", err)
	}
}

package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// A registry whose Register never returns, under an Export ctx with no
// deadline (serve's), fails Export after the node's register bound plus
// stepBoundGrace, naming the registry and the bound (tester66 F14: serve
// hung silently forever), and the listener it opened is gone.
func TestExportRegisterBoundedWithoutDeadline(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	reg := &faultRegistry{name: "nureg", gate: gate, register: block}
	cat := testCatalogs(t)
	n, logs := faultNode(t, cat, withFaultRegistry(t, cat, reg), WithRegisterTimeout(500*time.Millisecond))
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := n.Export(context.Background(), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Export with a Register that never returns still blocked after 20s")
	}
	took := time.Since(start)
	wantLeftRunning(t, err, logs, `kernel: export demo.Echo: registry "nureg" Register of demo.Echo did not return within 500ms; stopped waiting for it (it may still finish later)`)
	if took < 500*time.Millisecond {
		t.Errorf("Export failed after %v, before the 500ms bound", took)
	}
	var left *LeftRunningError
	if errors.As(err, &left) && left.Bound != 500*time.Millisecond {
		t.Errorf("Bound = %v, want 500ms", left.Bound)
	}
	if strings.Contains(err.Error(), "within ctx") {
		t.Errorf("error %q says ctx (internal wording), not the bound", err)
	}
}

// A registry that honours ctx gets the bound as its ctx's deadline and
// returns its own error before the kernel gives up on it.
func TestExportRegisterBoundIsRegistryCtx(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Registry.Register(ctxRegistry{}, faultOrigin); err != nil {
		t.Fatal(err)
	}
	n, _ := faultNode(t, cat, WithRegistry(spi.MustParse("ctxreg://x")), WithRegisterTimeout(300*time.Millisecond))
	_, err := n.Export(context.Background(), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	var left *LeftRunningError
	if err == nil || errors.As(err, &left) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Export error %v: want the registry's own ctx error (context deadline exceeded), not left running", err)
	}
	if !strings.Contains(err.Error(), `register demo.Echo in ctxreg://x`) {
		t.Errorf("error %q does not name the registry", err)
	}
}

// registerBound: the node's bound, or the registry URL's longer
// connect.timeout plus registerSlack; none when the node has none.
func TestRegisterBound(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for _, c := range []struct {
		reg  string
		want time.Duration
	}{
		{"zookeeper://127.0.0.1:2181", DefaultRegisterTimeout},
		{"zookeeper://127.0.0.1:2181?connect.timeout=5s", DefaultRegisterTimeout},
		{"zookeeper://127.0.0.1:2181?connect.timeout=30s", 32 * time.Second},
		{"zookeeper://127.0.0.1:2181?connect.timeout=bad", DefaultRegisterTimeout},
		{"zookeeper://127.0.0.1:2181?connect.timeout=1s", DefaultRegisterTimeout},
	} {
		if got := n.registerBound(spi.MustParse(c.reg)); got != c.want {
			t.Errorf("registerBound(%s) = %v, want %v", c.reg, got, c.want)
		}
	}
	none := NewNode(testCatalogs(t), WithLogger(quiet), WithRegisterTimeout(0))
	defer none.Close()
	if got := none.registerBound(spi.MustParse("zookeeper://127.0.0.1:2181?connect.timeout=30s")); got != 0 {
		t.Errorf("registerBound with WithRegisterTimeout(0) = %v, want 0", got)
	}
}

// ctxRegistry ("ctxreg") is the memory registry whose Register waits for
// its ctx's end and returns its error.
type ctxRegistry struct{}

func (ctxRegistry) Name() string { return "ctxreg" }
func (ctxRegistry) Build(u spi.URL) (spi.Registry, error) {
	r, err := memory.NewBuilder().Build(u.WithScheme("memory"))
	return ctxReg{r}, err
}

type ctxReg struct{ spi.Registry }

func (ctxReg) Register(ctx context.Context, u spi.URL) error {
	<-ctx.Done()
	return ctx.Err()
}

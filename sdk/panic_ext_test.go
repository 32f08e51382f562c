package sdk_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// exportPlugin builds the test plugin testdata/name, runs it in a host
// logging to hostLog, exports its one service (want: its name) from a
// provider node on loopback, and returns the provider's address and a
// consumer node; everything ends with the test.
func exportPlugin(t *testing.T, ctx context.Context, name, want string, hostLog io.Writer) (string, *kernel.Node) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/"+name).CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	h := pluginhost.New([]config.Plugin{{Name: name, Point: pluginhost.PointService, Command: bin}},
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(hostLog, nil))))
	t.Cleanup(func() { _ = h.Close() })
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	svcs := h.Services()
	if len(svcs) != 1 || svcs[0].Name != want {
		t.Fatalf("services %+v, want %s", svcs, want)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = provider.Close() })
	u := spi.MustParse("airnode://127.0.0.1:0/" + want)
	exp, err := provider.ExportInvoker(ctx, u, svcs[0].Invoker(u))
	if err != nil {
		t.Fatal(err)
	}
	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = consumer.Close() })
	return exp.URL().Address(), consumer
}

// A panic in a plugin's service method reaches a remote consumer as
// SERVER_ERROR "panic in acme.Calc.Boom: kaboom", as an in-process
// service's does, with no goroutine stack; the stack is in the plugin's
// log, which the host shows. A real plugin process (testdata/panicker)
// exported by a provider node and called over loopback TCP; the plugin
// keeps serving afterwards.
func TestPluginPanicIsServerErrorWithoutStack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var hostLog logbuf.Buffer
	addr, consumer := exportPlugin(t, ctx, "panicker", "acme.Calc", &hostLog)
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+addr+"/acme.Calc?timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}

	_, err = ref.Invoke(ctx, "Boom")
	var se *spi.Error
	if !errors.As(err, &se) || se.Status != spi.StatusServerError || se.Message != "panic in acme.Calc.Boom: kaboom" {
		t.Fatalf("Boom: %v, want SERVER_ERROR %q", err, "panic in acme.Calc.Boom: kaboom")
	}
	var sum int
	if err := ref.Call(ctx, "Add", []any{2, 3}, &sum); err != nil || sum != 5 {
		t.Fatalf("Add after the panic: %d, %v", sum, err)
	}
	// The stack is in the plugin's log as the host shows it (it arrives
	// through the plugin's stderr, asynchronously).
	deadline := time.Now().Add(10 * time.Second)
	for !(strings.Contains(hostLog.String(), "panic in service method") && strings.Contains(hostLog.String(), "runtime/debug.Stack")) {
		if time.Now().After(deadline) {
			t.Fatalf("the host's log has no stack of the panic:\n%s", hostLog.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(hostLog.String(), "panicker/main.go") {
		t.Errorf("the logged stack does not name the panicking source file:\n%s", hostLog.String())
	}
}

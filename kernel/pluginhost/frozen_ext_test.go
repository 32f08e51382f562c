package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// TestFrozenServicePluginIsUnresponsiveThenRecovers: a service plugin
// whose process is stopped (SIGSTOP: as a deadlock-free freeze, a GC
// storm) is not dead, so nothing restarts it; its calls pass their
// deadline with a warning naming it, and once a liveness ping has gone
// unanswered for the bound it is Unresponsive (serve's airnode.Health
// answers NOT_SERVING) with a warning; after SIGCONT it answers again
// and is no longer Unresponsive, still the same process (tester F21).
func TestFrozenServicePluginIsUnresponsiveThenRecovers(t *testing.T) {
	logs := new(logbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	h := pluginhost.New([]config.Plugin{{Name: "calc", Point: pluginhost.PointService, Command: binary("greeter")}},
		pluginhost.WithLogger(logger), pluginhost.WithLiveness(100*time.Millisecond, time.Second))
	t.Cleanup(func() { _ = h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	iv := h.Services()[0].Invoker(spi.MustParse("airnode://127.0.0.1:0/greeter.Greeter"))
	call := func(d time.Duration) error {
		cctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return iv.Invoke(cctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}}).Err
	}
	if err := call(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	before := info(t, h, "calc")
	if before.Unresponsive {
		t.Fatalf("unresponsive before the freeze: %+v", before)
	}
	pid := before.PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	waitFor(t, 10*time.Second, func() bool { return procState(pid) == "T" }, "the plugin process stopped")

	// the consumer's timer fires a moment before the provider's and it
	// goes away: a call cancelled just before its deadline counts too
	cctx, cancelCall := context.WithTimeout(context.Background(), time.Second)
	time.AfterFunc(900*time.Millisecond, cancelCall)
	if err := iv.Invoke(cctx, &spi.Invocation{Method: "Hello", Args: []any{"Ann"}}).Err; err == nil {
		t.Fatal("a call of the frozen plugin cancelled 100ms before its deadline succeeded")
	}
	cancelCall()
	if !strings.Contains(logs.String(), "plugin did not answer calls within their deadline") {
		t.Fatalf("no warning for the call cancelled just before its deadline:\n%s", logs)
	}
	for range 3 {
		err := call(200 * time.Millisecond)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusServerTimeout {
			t.Fatalf("call of the frozen plugin: %v, want SERVER_TIMEOUT", err)
		}
	}
	if n := strings.Count(logs.String(), "plugin did not answer calls within their deadline"); n != 1 {
		t.Fatalf("%d deadline warnings for 4 calls, want 1 (rate-bounded):\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "plugin=calc") || !strings.Contains(logs.String(), "calls=1 method=Hello") {
		t.Fatalf("deadline warning does not name the plugin or its count:\n%s", logs)
	}

	waitFor(t, 20*time.Second, func() bool { return info(t, h, "calc").Unresponsive }, "plugin marked unresponsive")
	i := info(t, h, "calc")
	if i.State != pluginhost.StateRunning || i.PID != pid || !strings.Contains(i.StateString(), "unresponsive") {
		t.Fatalf("frozen plugin: %+v (%s), want running, pid %d, unresponsive", i, i.StateString(), pid)
	}
	if !strings.Contains(logs.String(), "plugin does not answer") {
		t.Fatalf("no warning about the unresponsive plugin:\n%s", logs)
	}

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool { return !info(t, h, "calc").Unresponsive }, "plugin answering again")
	if err := call(10 * time.Second); err != nil {
		t.Fatalf("call after SIGCONT: %v", err)
	}
	if i := info(t, h, "calc"); i.PID != pid || i.Restarts != 0 {
		t.Fatalf("the frozen plugin was restarted: %+v (was pid %d)", i, pid)
	}
	if !strings.Contains(logs.String(), "plugin answers again") {
		t.Fatalf("no warning that the plugin answers again:\n%s", logs)
	}
}

// procState is the state letter of process pid in /proc ("R", "S", "T"
// for stopped), "" when it cannot be read.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// waitFor polls cond every 20ms until it holds, failing after within.
func waitFor(t *testing.T, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

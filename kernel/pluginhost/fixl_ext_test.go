package pluginhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// logHost starts a host for specs logging at info into the returned
// buffer.
func logHost(t *testing.T, opts []pluginhost.Option, specs ...config.Plugin) (*pluginhost.Host, *logbuf.Buffer) {
	t.Helper()
	var logs logbuf.Buffer
	opts = append([]pluginhost.Option{pluginhost.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, opts...)
	h, _, err := startHostWith(t, opts, specs...)
	if err != nil {
		t.Fatal(err)
	}
	return h, &logs
}

// tester72 #1 and #4: a SIGTERM the host did not send (an operator's
// polite restart, after replacing the binary) no longer leaves the
// service down for good after the sdk's 30 s: the sdk asks for a
// handover, the host starts a new process, moves the calls to it and
// closes the old one once its calls are done. Calls made all along, four
// at a time, none fails; the restart is counted.
func TestOutsideSIGTERMHandsOverWithoutFailedCalls(t *testing.T) {
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")})
	inv := h.Services()[0].Invoker(spi.MustParse("airnode://127.0.0.1:20880/greeter.Greeter"))
	old := info(t, h, "greeter").PID
	var calls, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res := inv.Invoke(context.Background(), &spi.Invocation{Method: "Hello", Args: []any{"Ann"}})
				calls.Add(1)
				if res.Err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, res.Err.Error())
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	now := waitRunning(t, h, "greeter", old)
	waitGone(t, old, 10*time.Second) // long before the sdk's 30 s
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d calls failed during the handover; first: %v", n, calls.Load(), firstErr.Load())
	}
	if now.RestartsTotal != 1 {
		t.Errorf("RestartsTotal %d after one handover, want 1", now.RestartsTotal)
	}
	t.Logf("%d calls, none failed; new pid %d", calls.Load(), now.PID)
	for _, re := range []string{
		`level=INFO msg="plugin running" .*pid=` + fmt.Sprint(now.PID) + ` .*took_over_from=` + fmt.Sprint(old),
		`level=INFO msg="plugin process exited" .*id=` + fmt.Sprint(old) + ` .*reason="handed over to pid ` + fmt.Sprint(now.PID) + `"`,
		`level=INFO msg="plugin handover done: the old process was stopped" .*old_pid=` + fmt.Sprint(old),
	} {
		if !regexp.MustCompile(re).MatchString(logs.String()) {
			t.Errorf("log lacks %s:\n%s", re, logs.String())
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a handover logs no warning or error:\n%s", logs.String())
	}
}

// A node that is shutting down (Host.ShuttingDown) starts no handover: a
// systemd stop sends SIGTERM to every process of the service, and the
// plugin serves the node's drain until Close.
func TestNoHandoverWhileShuttingDown(t *testing.T) {
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")})
	pid := info(t, h, "greeter").PID
	h.ShuttingDown()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "the node is shutting down: it serves until the host closes it") {
		if time.Now().After(deadline) {
			t.Fatalf("no note of the refused handover:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if i := info(t, h, "greeter"); i.PID != pid || i.State != pluginhost.StateRunning || i.RestartsTotal != 0 {
		t.Fatalf("after a SIGTERM while shutting down: %+v, want pid %d still running", i, pid)
	}
}

// tester72 #1, host side: under the default on-failure an exit the host
// did not ask for is restarted, status 0 included (a plugin that shuts
// down gracefully on a signal of its own); the restart is counted and
// the exit's time kept (airnode_plugin_restarts_total,
// airnode_plugin_last_exit_timestamp_seconds). The line saying it runs
// again is INFO (tester72 #6: a count-WARN alert fired on the recovery).
func TestExitZeroIsRestartedAndCounted(t *testing.T) {
	dir := t.TempDir()
	// a wrapper that exits 0 once its plugin is stopped by a signal: a
	// third-party plugin's graceful shutdown, not the sdk's
	script := dir + "/plugin.sh"
	body := "#!/bin/sh\n" + binary("greeter") + " &\nchild=$!\ntrap 'kill -KILL $child; exit 0' USR1\nwait $child\nwait $child\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: script})
	first := info(t, h, "greeter")
	if first.RestartsTotal != 0 || !first.LastExit.IsZero() {
		t.Fatalf("before any exit: %+v", first)
	}
	before := time.Now()
	if err := syscall.Kill(first.PID, syscall.SIGUSR1); err != nil { // the wrapper's: the process the host started
		t.Fatal(err)
	}
	now := waitRunning(t, h, "greeter", first.PID)
	if now.RestartsTotal != 1 || now.LastExit.Before(before) {
		t.Errorf("after an exit 0: %+v, want RestartsTotal 1 and LastExit after %v", now, before)
	}
	for _, re := range []string{
		`level=WARN msg="plugin exited; restarting" component="plugin host" plugin=greeter .*status="exit status 0"`,
		`level=INFO msg="plugin running" component="plugin host" plugin=greeter .*restarted_after=\d`,
	} {
		if !regexp.MustCompile(re).MatchString(logs.String()) {
			t.Errorf("log lacks %s:\n%s", re, logs.String())
		}
	}
	if strings.Contains(logs.String(), "not restarting") {
		t.Errorf("exit 0 not restarted:\n%s", logs.String())
	}
}

// fix-k leftover: a service plugin's warnings (what `airnode plugin
// check` prints) are logged at WARN once, when it first runs, as Export
// logs the methods of an in-process service it does not serve.
func TestServicePluginWarningsLoggedAtStart(t *testing.T) {
	_, logs := logHost(t, nil, config.Plugin{Name: "bad", Point: pluginhost.PointService, Command: binary("badmethods")})
	want := `level=WARN msg="service plugin: nu.S2.Sum is not served (a call of it is SERVICE_NOT_FOUND): Sum(context.Context, ...int) (int, error): variadic; take a []int instead of ...int" component="plugin host" plugin=bad point=service service=nu.S2`
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("log has %q %d times, want once:\n%s", want, n, logs.String())
	}
}

// tester71 #12: a plugin the host must kill at its Close (it did not exit
// within go-plugin's 2 s: here stopped by SIGSTOP) is not an ERROR
// "plugin process exited" with no reason: a WARN that says the host
// stopped it and why it killed it.
func TestKillAtCloseSaysTheHostStoppedIt(t *testing.T) {
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")})
	pid := info(t, h, "greeter").PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return procState(pid) == "T" }, "the plugin process stopped")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	want := regexp.MustCompile(`level=WARN msg="plugin process exited" component="plugin host" plugin=greeter .*error="signal: killed" .*reason="the host is closing; it did not exit within 2s of the host's request to close, so the host killed it"`)
	if !want.MatchString(text) || strings.Contains(text, "level=ERROR") || strings.Contains(text, "failed to exit gracefully") {
		t.Errorf("log at the kill of a plugin that did not exit in time lacks %s, or has an ERROR:\n%s", want, text)
	}
}

// Under restart: never a SIGTERM to an sdk plugin starts no new process
// (that policy starts none after the first), with one warning saying so.
func TestNoHandoverUnderRestartNever(t *testing.T) {
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter"), Restart: config.RestartNever})
	pid := info(t, h, "greeter").PID
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `level=WARN msg="plugin asked for a handover, but its restart policy is never`) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning of the refused handover:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if i := info(t, h, "greeter"); i.PID != pid || i.State != pluginhost.StateRunning || i.RestartsTotal != 0 {
		t.Fatalf("after a SIGTERM under restart: never: %+v, want pid %d still running", i, pid)
	}
}

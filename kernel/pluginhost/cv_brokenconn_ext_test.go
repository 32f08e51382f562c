package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// breakConnection makes the cutoff plugin of h named name stop its gRPC
// server (SIGUSR1): its listener closed and the host's connection cut,
// its process alive. It returns the process's PID.
func breakConnection(t *testing.T, h *pluginhost.Host, name string) int {
	t.Helper()
	pid := info(t, h, name).PID
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	return pid
}

// checkBrokenWarned checks that the host warned of the broken connection
// of plugin name's process pid, naming the plugin and what it saw, and
// that the process is gone: killed by the host, not left running.
func checkBrokenWarned(t *testing.T, logs *logbuf.Buffer, name string, pid int) {
	t.Helper()
	waitGone(t, pid, 10*time.Second)
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "connection to the plugin is broken") {
			line = l
			break
		}
	}
	for _, want := range []string{"level=WARN", "plugin=" + name, fmt.Sprintf("pid=%d", pid), "Unavailable"} {
		if !strings.Contains(line, want) {
			t.Fatalf("warning of the broken connection %q lacks %q; logs:\n%s", line, want, logs)
		}
	}
}

// fix-cv: a service plugin whose process lives but whose gRPC
// connection broke (it stopped its server: nothing listens on its
// socket) is found out by the host's liveness ping, killed by its PID and
// restarted as a dead process is, within about two seconds: calls do not
// fail until their deadline one after another for ever.
func TestServicePluginWithABrokenConnectionIsRestarted(t *testing.T) {
	logs := new(logbuf.Buffer)
	h, _, err := startHostLogging(t, slog.New(slog.NewTextHandler(logs, nil)),
		config.Plugin{Name: "acme.cut", Point: pluginhost.PointService, Command: binary("cutoff")})
	if err != nil {
		t.Fatal(err)
	}
	iv := h.Services()[0].Invoker(spi.MustParse("airnode://127.0.0.1:0/acme.Cut"))
	call := func() spi.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return iv.Invoke(ctx, &spi.Invocation{Method: "Pid"})
	}
	r := call()
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	pid := breakConnection(t, h, "acme.cut")
	if got := fmt.Sprint(r.Value); got != fmt.Sprint(pid) {
		t.Fatalf("Pid() = %s, want %d", got, pid)
	}
	broke := time.Now()
	failed := 0
	for {
		r = call()
		if r.Err == nil && fmt.Sprint(r.Value) != fmt.Sprint(pid) {
			break
		}
		if r.Err != nil {
			failed++
		}
		if time.Since(broke) > 15*time.Second {
			t.Fatalf("no call answered by a new process 15s after the connection broke (%d failed); last: %+v; plugin %+v",
				failed, r, info(t, h, "acme.cut"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(broke)
	t.Logf("a new process answered %v after the break (%d calls failed meanwhile): %v", took.Round(time.Millisecond), failed, r.Value)
	checkBrokenWarned(t, logs, "acme.cut", pid)
	if i := info(t, h, "acme.cut"); i.State != pluginhost.StateRunning || i.RestartsTotal != 1 {
		t.Fatalf("after the restart: %+v, want running, one restart", i)
	}
	if !strings.Contains(logs.String(), "plugin exited; restarting") || !strings.Contains(logs.String(), "its gRPC connection was broken") {
		t.Fatalf("the restart's warning does not say why the host killed it:\n%s", logs)
	}
	newPid := info(t, h, "acme.cut").PID
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, newPid, 10*time.Second)
}

// fix-cv: a filter call made while its plugin's connection is broken
// (the process alive) waits for the restart the host makes of it, as for
// a dead process (fix-cr): a consumer's within its timeout, then through
// the new process; a provider's within half of what is left of its
// deadline, answering SERVICE_NOT_FOUND "(the call did not run)" when no
// process comes in time.
func TestFilterCallsWaitForTheRestartOfAPluginWithABrokenConnection(t *testing.T) {
	for _, side := range []string{"consumer", "provider"} {
		t.Run(side, func(t *testing.T) {
			logs := new(logbuf.Buffer)
			h, cat, err := startHostLogging(t, slog.New(slog.NewTextHandler(logs, nil)),
				config.Plugin{Name: "acme.cut", Point: pluginrpc.PointFilter, Command: binary("cutoff")})
			if err != nil {
				t.Fatal(err)
			}
			b, err := cat.Filter.Get("acme.cut")
			if err != nil {
				t.Fatal(err)
			}
			f, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?timeout=8s&side=" + side))
			if err != nil {
				t.Fatal(err)
			}
			next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
				return spi.Result{Value: "sent"}
			})
			invoke := func(d time.Duration) spi.Result {
				ctx, cancel := context.WithTimeout(context.Background(), d)
				defer cancel()
				return f.Invoke(ctx, next, &spi.Invocation{Method: "Echo", Args: []any{"x"}})
			}
			if r := invoke(8 * time.Second); r.Err != nil || r.Value != "sent" {
				t.Fatalf("plugin up: %+v", r)
			}
			pid := breakConnection(t, h, "acme.cut")
			time.Sleep(50 * time.Millisecond) // the server stops
			if side == "provider" {
				// half of 300ms: too short for any restart (the host confirms the break first)
				r := invoke(300 * time.Millisecond)
				var se *spi.Error
				if !errors.As(r.Err, &se) || se.Status != spi.StatusServiceNotFound || !strings.Contains(se.Message, "(the call did not run)") {
					t.Fatalf("provider call with no time to wait for the restart: %+v, want SERVICE_NOT_FOUND (the call did not run)", r)
				}
				t.Logf("provider, 300ms: %v", r.Err)
			}
			start := time.Now()
			r := invoke(8 * time.Second)
			took := time.Since(start)
			if r.Err != nil || r.Value != "sent" {
				t.Fatalf("call made while the connection was broken: %+v after %v, want it through the restarted process; plugin %+v\n%s",
					r, took, info(t, h, "acme.cut"), logs)
			}
			t.Logf("the call waited %v for the restart", took.Round(time.Millisecond))
			if i := info(t, h, "acme.cut"); i.PID == pid || i.State != pluginhost.StateRunning {
				t.Fatalf("after the call: %+v, want a new process", i)
			}
			checkBrokenWarned(t, logs, "acme.cut", pid)
			newPid := info(t, h, "acme.cut").PID
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			waitGone(t, newPid, 10*time.Second)
		})
	}
}

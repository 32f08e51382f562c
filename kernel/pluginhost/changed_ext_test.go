package pluginhost_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// waitChange waits for ch (Host.Changed) to close, up to within.
func waitChange(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("Changed not closed within %v: %s", within, what)
	}
}

// Changed wakes a watcher when the host gives up on a service plugin
// (restart: never, killed): the watcher reads Plugins and finds it
// GaveUp, which a restarting plugin is not; Close is a change too
// (stopped).
func TestChangedSignalsTheGiveUp(t *testing.T) {
	h, _, err := startHost(t,
		config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter"), Restart: config.RestartNever},
		config.Plugin{Name: "again", Point: pluginhost.PointService, Command: binary("greeter"), Restart: config.RestartAlways})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"greeter", "again"} {
		if i := info(t, h, name); i.GaveUp() {
			t.Fatalf("%s running: GaveUp true (%+v)", name, i)
		}
	}

	ch := h.Changed()
	again := info(t, h, "again").PID
	if err := syscall.Kill(again, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, 10*time.Second, "restart: always plugin killed")
	waitRunning(t, h, "again", again)
	if i := info(t, h, "again"); i.GaveUp() {
		t.Fatalf("a restarted plugin is given up on: %+v", i)
	}

	deadline := time.Now().Add(10 * time.Second)
	ch = h.Changed()
	if err := syscall.Kill(info(t, h, "greeter").PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for !info(t, h, "greeter").GaveUp() {
		waitChange(t, ch, time.Until(deadline), "restart: never plugin killed")
		ch = h.Changed()
	}
	if i := info(t, h, "greeter"); i.State != pluginhost.StateFailed {
		t.Fatalf("given up on in state %+v, want failed", i)
	}

	ch = h.Changed()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, time.Second, "Close")
	if i := info(t, h, "again"); !i.GaveUp() || i.State != pluginhost.StateStopped {
		t.Fatalf("after Close: %+v, want stopped and given up on", i)
	}
}

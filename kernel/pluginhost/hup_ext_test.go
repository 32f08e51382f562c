package pluginhost_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// TestPluginSurvivesSIGHUP: a closing ssh session or a logrotate
// `kill -HUP` reaches the whole process group; `airnode serve` reopens
// its access logs and serves on (tester16 #6), and its sdk plugins must
// not die of it either (the sdk ignores SIGHUP under a host).
func TestPluginSurvivesSIGHUP(t *testing.T) {
	h, _, err := startHost(t, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter"), Restart: config.RestartNever})
	if err != nil {
		t.Fatal(err)
	}
	before := info(t, h, "greeter")
	if before.State != pluginhost.StateRunning || before.PID == 0 {
		t.Fatalf("greeter: %+v", before)
	}
	if err := syscall.Kill(before.PID, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	after := info(t, h, "greeter")
	if after.State != pluginhost.StateRunning || after.PID != before.PID {
		t.Fatalf("after SIGHUP: %+v, want still running as pid %d", after, before.PID)
	}
	if err := syscall.Kill(before.PID, 0); err != nil {
		t.Fatalf("plugin process %d after SIGHUP: %v", before.PID, err)
	}
}

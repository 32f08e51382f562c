package pluginhost_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// exitedLine returns go-plugin's "plugin process exited" line of logs for
// process pid, "" when there is none.
func exitedLine(logs *logbuf.Buffer, pid int) string {
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="plugin process exited"`) && strings.Contains(l, fmt.Sprintf(" id=%d ", pid)) {
			return l
		}
	}
	return ""
}

// restartedFrom waits up to 15 s for plugin name of h to run a process
// other than pid, and for the "plugin process exited" line of pid.
func restartedFrom(t *testing.T, h *pluginhost.Host, logs *logbuf.Buffer, name string, pid int) string {
	t.Helper()
	waitFor(t, 15*time.Second, func() bool {
		i := info(t, h, name)
		return i.PID != pid && i.State == pluginhost.StateRunning && exitedLine(logs, pid) != ""
	}, "a new process and the old one's exit logged")
	return exitedLine(logs, pid)
}

// fix-dd #3: when the host kills a plugin process on purpose, its gRPC
// connection broken while it runs (fix-cv), go-plugin's "plugin process
// exited" (error="signal: killed") is logged at INFO with the host's
// reason, not at ERROR; a process that dies on its own (a SIGKILL the
// host did not send) keeps ERROR. A real plugin process (testdata's
// cutoff), the log captured.
func TestDD_HostKillOfABrokenPluginIsNotAnError(t *testing.T) {
	h, logs := logHost(t, nil, config.Plugin{Name: "acme.cut", Point: pluginhost.PointService, Command: binary("cutoff")})
	pid := breakConnection(t, h, "acme.cut")
	line := restartedFrom(t, h, logs, "acme.cut", pid)
	checkBrokenWarned(t, logs, "acme.cut", pid)
	if !strings.HasPrefix(line, "time=") || !strings.Contains(line, "level=INFO") || !strings.Contains(line, `reason="killed by the host: its gRPC connection was broken while it ran`) {
		t.Errorf("exit of the process the host killed: %q; want level=INFO with the host's reason", line)
	}
	if strings.Contains(line, "did not exit within") || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the host's kill logged as a failure:\n%s", logs)
	}

	// the plugin's process dies on its own: ERROR, as before
	pid = info(t, h, "acme.cut").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	line = restartedFrom(t, h, logs, "acme.cut", pid)
	if !strings.Contains(line, "level=ERROR") || strings.Contains(line, "reason=") {
		t.Errorf("exit of a process killed by another: %q; want level=ERROR, no host reason", line)
	}
}

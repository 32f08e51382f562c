package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tester61 finding 11a: a SIGTERM while serve's export waits for a
// ZooKeeper it cannot reach (nothing listens on the port) is a stop the
// operator asked for: the Register left running is logged at INFO saying
// so, with the signal as its cause (or, when the Register returns at once
// for its cancelled ctx, its error is quoted), and nothing at WARN says
// "left running"; serve exits 0.
func TestF17_SignalDuringStartupLeftRunningAtInfo(t *testing.T) {
	t.Parallel()
	const zk = "zookeeper://127.0.0.1:31771" // nothing listens here
	p, _ := launchServe(t, binary, "127.0.0.1:0", zk+"?connect.timeout=30s", noAirnodeEnv, "", "--shutdown-wait", "0")
	waitFor(t, "serve listening", func() bool { return strings.Contains(p.logText(), "msg=listening") })
	time.Sleep(300 * time.Millisecond) // into the Register's wait for a session
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("serve stopped during startup: exit %d, want 0\n%s", code, p.logText())
	}
	out := p.logText()
	// Two right outcomes, by which the kernel sees first: the Register
	// still waiting (left running, at INFO, with the signal as cause), or
	// the Register itself returning at once for its cancelled ctx (its
	// error, "context canceled", is then what the startup stop quotes).
	want := `level=INFO msg="export demo.Echo: registry \"zookeeper\" Register of demo.Echo not waited for: ctx cancelled, a stop was asked for; it may still finish later"`
	leftRunning := strings.Contains(out, want) && strings.Contains(out, `cause="terminated signal received"`)
	returned := strings.Contains(out, "cannot register demo.Echo") && strings.Contains(out, "context canceled")
	if !leftRunning && !returned {
		t.Errorf("no INFO line saying the stop was asked for (want %s), nor the Register's own cancelled return:\n%s", want, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "may still finish later") {
			t.Errorf("a WARN for a stop that was asked for: %s", l)
		}
	}
	if !strings.Contains(out, "SIGTERM received during startup, while exporting demo.Echo: stopping before serving") {
		t.Errorf("no line naming the signal:\n%s", out)
	}
}

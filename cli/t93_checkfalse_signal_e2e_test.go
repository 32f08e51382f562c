package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester93 #6: a SIGINT while serve's export waits for a ZooKeeper it
// cannot reach with check=false (it waits connect.timeout, then queues the
// entry) is a stop during startup: serve never says "serving" after the
// signal, names the signal and the step, and exits 0.
func TestT93_SignalWhileCheckFalseExportWaitsIsNoServing(t *testing.T) {
	t.Parallel()
	const zk = "zookeeper://127.0.0.1:36748" // nothing listens here
	p, _ := launchServe(t, binary, "127.0.0.1:0", zk+"?check=false&connect.timeout=2s", noAirnodeEnv, "", "--shutdown-wait", "0")
	waitFor(t, "serve listening", func() bool { return strings.Contains(p.logText(), "msg=listening") })
	time.Sleep(300 * time.Millisecond) // into the Register's wait for a session
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("serve stopped during startup: exit %d, want 0\n%s", code, p.logText())
	}
	out := p.logText()
	if strings.Contains(out, "airnode serve: serving") {
		t.Errorf("serve said it was serving after the SIGINT:\n%s", out)
	}
	if !strings.Contains(out, "SIGINT received during startup, while exporting demo.Echo: stopping before serving") {
		t.Errorf("no line naming the signal and the step:\n%s", out)
	}
}

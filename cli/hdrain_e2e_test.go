package cli

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester27 finding 5: a serve that drains a long call closes its
// listener once --shutdown-wait has passed: a new connection is refused
// and a new consumer's call fails at once, CHANNEL_INACTIVE "connection
// refused", while the call in flight completes and serve exits 0.
func TestHDrainServeRefusesNewConnectionsAfterWait(t *testing.T) {
	const wait = 500 * time.Millisecond
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", wait.String(), "--metrics", "127.0.0.1:0")
	long := make(chan result, 1)
	go func() { long <- call(t, nil, "--timeout", "20s", p.url("demo.Echo"), "Sleep", "3000") }()
	waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 1`, 10*time.Second)
	begun := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(begun.Add(wait + 700*time.Millisecond)))
	if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("a new connection %v after SIGTERM (--shutdown-wait %v, a Sleep in flight) was accepted; want refused",
			time.Since(begun).Round(time.Millisecond), wait)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a new connection after the wait: %v; want connection refused", err)
	}
	r := call(t, nil, "--timeout", "5s", p.url("demo.Echo"), "Info")
	if r.code == 0 || !strings.Contains(r.stderr, "CHANNEL_INACTIVE") || !strings.Contains(r.stderr, "connection refused") || r.elapsed > 3*time.Second {
		t.Fatalf("a new consumer's call during the drain: exit %d after %v, stderr %q; want a failure at once, CHANNEL_INACTIVE ... connection refused",
			r.code, r.elapsed.Round(time.Millisecond), r.stderr)
	}
	if lr := <-long; lr.code != 0 || strings.TrimSpace(lr.stdout) != "3000" {
		t.Fatalf("the Sleep in flight at SIGTERM: exit %d, stdout %q, stderr %q; want it to complete", lr.code, lr.stdout, lr.stderr)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if !strings.Contains(p.logText(), "listener closed; draining the calls in flight") {
		t.Fatalf("no listener-closed line in serve's log:\n%s", p.logText())
	}
}

// tester27 finding 7: -p shutdown.wait is checked as --shutdown-wait is
// (0 to shutdown.timeout; exit 2 before listening, a usage error since
// fix-bs, naming the key and what is allowed), refused against --shutdown-wait with another value,
// and a valid one is the wait serve uses and logs.
func TestHDrainShutdownWaitParam(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-p", "shutdown.wait=abc"}, []string{`invalid value "abc" for URL key "shutdown.wait"`, "from 0 to shutdown.timeout (10s"}},
		{[]string{"-p", "shutdown.wait=-1s"}, []string{`invalid value "-1s" for URL key "shutdown.wait"`, "from 0 to shutdown.timeout (10s"}},
		{[]string{"-p", "shutdown.wait=3s", "--shutdown-timeout", "2s"}, []string{`invalid value "3s" for URL key "shutdown.wait"`, "from 0 to shutdown.timeout (2s"}},
	} {
		expectServeRefusedCode(t, exitUsage, tc.args, tc.want...) // -p's value: a usage error (fix-bs)
	}
	// the flag and -p contradicting each other: a usage error
	expectServeRefusedCode(t, 2, []string{"-p", "shutdown.wait=5s", "--shutdown-wait", "3s"}, "-p shutdown.wait=5s conflicts with --shutdown-wait 3s")

	// A valid -p shutdown.wait is the wait: logged and waited (the same
	// duration in milliseconds agrees with the flag).
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "shutdown.wait=1500", "--shutdown-wait", "1.5s")
	begun := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	took := time.Since(begun)
	if !strings.Contains(p.logText(), `airnode serve: shutting down" wait=1.5s timeout=10s`) {
		t.Errorf("serve's shutdown line does not say wait=1.5s:\n%s", p.logText())
	}
	if took < 1400*time.Millisecond || took > 6*time.Second {
		t.Errorf("SIGTERM to exit took %v; want about the 1.5s wait", took.Round(time.Millisecond))
	}
}

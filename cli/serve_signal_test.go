package cli

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
)

// groupServe is an `airnode serve` in a process group of its own, as GNU
// timeout runs its child, so that the test can signal the process and then
// its group as timeout does.
type groupServe struct {
	cmd  *exec.Cmd
	log  logbuf.Buffer
	addr string
	done chan error
}

// startGroupServe starts serve on 127.0.0.1:0 with a file registry in a
// temporary directory and args, in a new process group, and waits for its
// "serving" line; cleanup kills the group.
func startGroupServe(t *testing.T, args ...string) *groupServe {
	t.Helper()
	dir := t.TempDir()
	g := &groupServe{done: make(chan error, 1)}
	g.cmd = exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)...)
	g.cmd.Env = append(g.cmd.Environ(), "XDG_RUNTIME_DIR="+dir)
	g.cmd.Stdout, g.cmd.Stderr = &g.log, &g.log
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.done <- g.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		if g.done != nil {
			<-g.done
		}
		if t.Failed() {
			t.Logf("serve %d log:\n%s", g.cmd.Process.Pid, g.log.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m := servingLine.FindStringSubmatch(g.log.String()); m != nil {
			g.addr = m[1]
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready after 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitCode waits up to within for the process to exit and returns its
// exit code.
func (g *groupServe) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-g.done:
		g.done = nil
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("serve still running after %v", within)
		return -1
	}
}

// Tester finding (item 7): `timeout 3 airnode serve` signals serve and
// then its process group, two SIGTERMs microseconds apart, and serve took
// the second for the operator's "exit now". Two SIGTERMs back to back
// (the process, then its group, as GNU timeout sends them; 10 ms apart
// here so that both arrive) are one stop:
// serve unregisters, drains the call in flight, and exits 0.
func TestServeTwoSIGTERMsAtOnceAreOneStop(t *testing.T) {
	g := startGroupServe(t, "--shutdown-wait", "300ms", "--shutdown-timeout", "20s")
	ref := refer(t, "airnode://"+g.addr+"/demo.Echo?timeout=30s")
	if _, err := ref.Invoke(context.Background(), "Echo", 0); err != nil {
		t.Fatal(err)
	}
	called := make(chan error, 1)
	go func() {
		_, err := ref.Invoke(context.Background(), "Sleep", 1500)
		called <- err
	}()
	inv := ref.Providers()[0]
	waitFor(t, "the Sleep call in flight", func() bool { return inv.Stats().Active() == 1 })
	pid := g.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// 10 ms apart: sent at once, the kernel often merges the two while
	// the first is pending, and the test would not see the second
	time.Sleep(10 * time.Millisecond)
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.exitCode(t, 20*time.Second); code != 0 {
		t.Errorf("serve exited %d after two SIGTERMs at once; want 0 (drained)", code)
	}
	log := g.log.String()
	if strings.Contains(log, "second SIGTERM") || !strings.Contains(log, "airnode serve: stopped") {
		t.Errorf("serve did not drain and stop after two SIGTERMs at once:\n%s", log)
	}
	select {
	case err := <-called:
		if err != nil {
			t.Errorf("the Sleep call in flight failed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the Sleep call in flight was not answered")
	}
}

// A second SIGTERM a second after the first is the operator's: serve
// exits at once with 143, during its 5 s shutdown wait.
func TestServeSIGTERMASecondLaterExitsAtOnce(t *testing.T) {
	g := startGroupServe(t, "--shutdown-wait", "5s", "--shutdown-timeout", "20s")
	pid := g.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	start := time.Now()
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.exitCode(t, 10*time.Second); code != 143 {
		t.Errorf("serve exited %d after a second SIGTERM 1 s later; want 143", code)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("serve took %v to exit after the second SIGTERM (its shutdown wait is 5 s)", d)
	}
	if want := regexp.MustCompile(`airnode: serve: second SIGTERM: exiting now, abandoning 0 calls in flight`); !want.MatchString(g.log.String()) {
		t.Errorf("stderr lacks %q:\n%s", want, g.log.String())
	}
}

package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester52 finding 3 (removal-damping WARN in a rolling restart): a
// provider that unregisters on SIGTERM announces its shutdown first (the
// draining event, sent before its entry is removed, while the file
// registry pushes a list that lost providers only after its 100 ms
// settle), so the consumer never counts it as a connected provider the
// registry dropped. A rolling replacement to new addresses, two
// providers leaving 2.5 s apart (inside removal damping's 5 s window,
// which made two pre-draining-event providers of 30 Nov look like a
// registry losing half its entries), logs no damping WARN and fails no
// call. Real serve processes and a real bench through the file registry.
func TestRollingReplacementThroughTheFileRegistryIsNotDamped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := "file://" + dir
	env := append([]string{"XDG_RUNTIME_DIR=" + dir}, noAirnodeEnv...)
	start := func() *provider {
		return startServe(t, "127.0.0.1:0", reg, env, "", "-p", "warmup=0", "--shutdown-wait", "2s", "--shutdown-timeout", "10s")
	}
	stop := func(p *provider) {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2 := start(), start()
	var stdout, stderr bytes.Buffer
	bench := exec.Command(binary, "bench", "--registry", reg, "--duration", "9s", "-c", "2", "demo.Echo")
	bench.Env = append(bench.Environ(), env...)
	bench.Stdout, bench.Stderr = &stdout, &stderr
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	var benchErr error
	done := make(chan struct{})
	go func() { benchErr = bench.Wait(); close(done) }()
	t.Cleanup(func() { _ = bench.Process.Kill(); <-done })

	time.Sleep(2 * time.Second)
	q1 := start()
	time.Sleep(time.Second)
	stop(p1)
	time.Sleep(1500 * time.Millisecond)
	q2 := start()
	time.Sleep(time.Second)
	stop(p2)
	for _, p := range []*provider{p1, p2} {
		if code := p.wait(t, 20*time.Second); code != 0 {
			t.Errorf("provider %s: exit %d after SIGTERM\n%s", p.addr, code, p.logText())
		}
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("bench did not end\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	out := stdout.String()
	if benchErr != nil || !strings.Contains(out, "errors      none") {
		t.Fatalf("bench: %v\nstdout:\n%s\nstderr:\n%s", benchErr, out, stderr.String())
	}
	if strings.Contains(stderr.String(), "connected providers of demo.Echo at once") || strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("a rolling replacement logged a warning:\n%s", stderr.String())
	}
	for _, p := range []*provider{p1, p2, q1, q2} {
		if !strings.Contains(out, p.addr) {
			t.Errorf("bench attempts lack provider %s:\n%s", p.addr, out)
		}
	}
}

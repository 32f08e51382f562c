package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tester36 F6: `airnode call` at its defaults (timeout 1s) through a
// balancer plugin whose Select hangs succeeds through the documented
// fallback to the default balancer: the plugin is given half of the
// call's timeout. It failed CLIENT_TIMEOUT after 1s, the Select bound
// (1s) being the call's own.
func TestPlug3bCallFallsBackFromAHungBalancerAtTheDefaultTimeout(t *testing.T) {
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	dir := t.TempDir()
	hang := filepath.Join(dir, "hang")
	if err := os.WriteFile(hang, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg")
	serve(t, "127.0.0.1:0", reg)
	serve(t, "127.0.0.1:0", reg)
	cfg := writeConfig(t, "plugins:\n  - name: acme.zonelb\n    point: loadbalance\n    command: "+moody+"\n    env: {LB_MODE: hang, HANG_FILE: "+hang+"}\n")
	began := time.Now()
	code, out, errOut := runBin(t, "", "--config", cfg, "call", "--registry", "file://"+reg, "demo.Echo?loadbalance=acme.zonelb", "Echo", `"x"`)
	took := time.Since(began)
	_ = os.Remove(hang) // let the plugin's handler return
	if code != 0 || strings.TrimSpace(out) != `"x"` {
		t.Fatalf("call: exit %d after %v, stdout %q; want \"x\" through the fallback\nstderr:\n%s", code, took, out, errOut)
	}
	// half of what is left of the call's 1s when the balancer is asked:
	// 500ms, or a few ms less on a loaded machine (499ms seen in CI)
	if !strings.Contains(errOut, "plugin balancer did not answer in time") || !halfTimeoutBound.MatchString(errOut) {
		t.Errorf("want the bypass warning with bound=450-500ms (half the 1s timeout):\n%s", errOut)
	}
	t.Logf("call took %v", took)
}

// halfTimeoutBound matches the bypass warning's bound for a call with the
// default 1s timeout.
var halfTimeoutBound = regexp.MustCompile(`bound=(4[5-9][0-9]ms|500ms)`)

// tester36 F9: bench --server-pid reports the provider's CPU on a short
// run every time, not in 10 ms steps: 5 runs of 300 calls each have a
// server figure, and they are not all multiples of one 10 ms tick per
// run.
func TestPlug3bBenchServerCPUOnShortRuns(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	pid := strconv.Itoa(p.cmd.Process.Pid)
	ticks := 0
	for i := range 5 {
		r := benchJSON(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "4", "--warmup", "0", "--server-pid", pid)
		if r.ServerCPUUS <= 0 {
			t.Fatalf("run %d: no server CPU: %+v", i, r)
		}
		total := time.Duration(r.ServerCPUUS * float64(r.Calls) * float64(time.Microsecond))
		if (total+50*time.Microsecond)%(10*time.Millisecond) < 100*time.Microsecond {
			ticks++
		}
		t.Logf("run %d: server %.1f µs/call, %v in all", i, r.ServerCPUUS, total)
	}
	if ticks == 5 {
		t.Fatalf("every run's server CPU is a whole number of 10 ms ticks")
	}
}

// processCPU reads another process's CPU time in nanoseconds, its
// threads summed: a child that spins for 300 ms reads at most that, and
// not a whole number of ticks.
func TestPlug3bProcessCPUOfAnotherProcess(t *testing.T) {
	cmd := execSpin(t)
	time.Sleep(300 * time.Millisecond)
	d, err := processCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > 400*time.Millisecond {
		t.Fatalf("CPU of a child spinning for at most 300ms: %v", d)
	}
	if d%(10*time.Millisecond) == 0 {
		t.Fatalf("CPU %v is a whole number of 10 ms ticks: not the nanosecond clock", d)
	}
}

// execSpin starts a shell that spins on the CPU; cleanup kills it.
func execSpin(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/internal/testbin"
)

// startBench runs `airnode bench args... --json` in the background: pids
// receives the pid of each "plugin running" line of its log (the first
// start, then each restart), and onLine, when not nil, gets every line of
// its log; wait waits for it to exit and returns its report and its log.
// The process is killed at cleanup.
func startBench(t *testing.T, onLine func(string), args ...string) (pids <-chan int, wait func() (*bench.Report, string)) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"bench"}, args...), "--json")...)
	cmd.Env = append(hostEnviron(), "XDG_RUNTIME_DIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	ch := make(chan int, 16)
	var log bytes.Buffer
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := pluginPID.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[2])
				select {
				case ch <- n:
				default:
				}
			}
			if onLine != nil {
				onLine(sc.Text())
			}
		}
	}()
	return ch, func() (*bench.Report, string) {
		werr := cmd.Wait()
		<-logDone
		if werr != nil {
			t.Fatalf("bench: %v\n%s", werr, log.String())
		}
		var r bench.Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("bench --json printed %q: %v\n%s", out.String(), err, log.String())
		}
		t.Logf("calls %d, errors %v, first error %q, attempts %v", r.Calls, r.Errors, r.FirstError, r.Providers)
		return &r, log.String()
	}
}

// recvPID waits up to 15 s for a pid on pids.
func recvPID(t *testing.T, pids <-chan int, what string) int {
	t.Helper()
	select {
	case pid := <-pids:
		return pid
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s within 15 s", what)
		return 0
	}
}

// fix-cr #1 (tester96): kill -9 of a consumer's filter plugin during
// `airnode bench -c 4` failed 92% of the calls of the run (CLIENT_ERROR
// with gRPC's dial text) over a restart of 263 ms. A call that finds the
// filter's process gone waits for the host's restart, within its timeout,
// and goes on through the new process: no call fails.
func TestCR_ConsumerFilterPluginKilledDuringBenchFailsNoCall(t *testing.T) {
	filter := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+filter+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir())

	pids, wait := startBench(t, nil, "--config", cfg, "--log-level", "info", p.url("demo.Echo"),
		"--duration", "4s", "-c", "4", "--warmup", "0")
	pid := recvPID(t, pids, "plugin start in bench's log")
	time.Sleep(time.Second) // calls through it
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	again := recvPID(t, pids, "restart of the killed plugin in bench's log")
	t.Logf("plugin %d killed, %d running %v later", pid, again, time.Since(killed).Round(time.Millisecond))
	r, log := wait()
	if len(r.Errors) != 0 || r.OK == 0 || r.OK != r.Calls {
		t.Fatalf("%d of %d calls failed (%v), first error %q; want none failed over the plugin's restart\n%s", r.Calls-r.OK, r.Calls, r.Errors, r.FirstError, log)
	}
}

// fix-cr #2 (tester96): a provider whose filter plugin is killed and
// whose restarts fail (its binary replaced by one that exits at start)
// answers the calls that waited for it half of their deadline in vain
// SERVICE_NOT_FOUND, not run (the filter never called next), which the
// consumer's failover retries on the other provider, the method not
// idempotent; a call in the filter when its process died is not run
// either. Before, those calls failed SERVER_ERROR "... (failover made
// none of its retries=2: the request reached the provider, which may have
// run it ...)".
func TestCR_ProviderFilterPluginDownAnswersNotRunAndFailoverRetriesElsewhere(t *testing.T) {
	good := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	dir := t.TempDir()
	bin := filepath.Join(dir, "auth")
	testbin.ReplaceFile(t, good, bin)
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: "+bin+"}\n")
	regDir := filepath.Join(dir, "reg")
	p1 := serve(t, "127.0.0.1:0", regDir, "--config", cfg)
	p2 := serve(t, "127.0.0.1:0", regDir)
	m := pluginPID.FindStringSubmatch(p1.logText())
	if m == nil || m[1] != "acme.auth" {
		t.Fatalf("serve did not start the plugin:\n%s", p1.logText())
	}
	pid, _ := strconv.Atoi(m[2])

	_, wait := startBench(t, nil, "--registry", "file://"+regDir, "airnode:///demo.Echo",
		"--duration", "5s", "-c", "4", "--warmup", "0", "--timeout", "1s")
	time.Sleep(1500 * time.Millisecond) // bench waits for both providers, then calls both
	testbin.ReplaceFile(t, exitsAtStart(t), bin)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	failed := regexp.MustCompile(`plugin restart failed; trying again`)
	waitFor(t, "two failed restarts of serve 1's plugin", func() bool {
		return len(failed.FindAllString(p1.logText(), -1)) >= 2
	})
	testbin.ReplaceFile(t, good, bin)
	waitFor(t, "serve 1's plugin running again", func() bool {
		return strings.Count(p1.logText(), `msg="plugin running" component="plugin host" plugin=acme.auth`) >= 2
	})
	t.Logf("plugin killed, running again %v later", time.Since(killed).Round(time.Millisecond))
	r, log := wait()
	var attempts int64
	for _, n := range r.Providers {
		attempts += n
	}
	if len(r.Errors) != 0 || r.OK == 0 {
		t.Fatalf("%d of %d calls failed (%v), first error %q; want none: the calls serve 1 did not run are retried on serve 2\n%s", r.Calls-r.OK, r.Calls, r.Errors, r.FirstError, log)
	}
	if attempts <= r.Calls || r.Providers[p2.addr] == 0 || r.Providers[p1.addr] == 0 {
		t.Fatalf("attempts %v for %d calls; want retries (more attempts than calls) and both providers called", r.Providers, r.Calls)
	}
}

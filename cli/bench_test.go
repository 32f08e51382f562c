package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// benchRun runs `airnode bench args...` with env added and returns its
// stdout; a non-zero exit fails the test.
func benchRun(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"bench"}, args...)...)
	cmd.Env = append(hostEnviron(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench %v: %v\nstdout %s\nstderr %s", args, err, out.String(), errb.String())
	}
	if errb.Len() > 0 {
		t.Logf("bench stderr: %s", errb.String())
	}
	return out.String()
}

// benchStart starts `airnode bench args...` in the background (killed
// 60 s on, or at the test's end) and returns it with its stdout and
// stderr (which the test may read while bench runs); the caller Waits
// for it.
func benchStart(t *testing.T, args ...string) (cmd *exec.Cmd, out *bytes.Buffer, errb *logbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd = exec.CommandContext(ctx, binary, append([]string{"bench"}, args...)...)
	out, errb = &bytes.Buffer{}, &logbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, errb
}

// benchJSON runs bench with --json and decodes its report; it also checks
// that every documented field is present and that the totals agree: calls
// = ok + errors = the timeline's calls, errors = the timeline's errors.
func benchJSON(t *testing.T, env []string, args ...string) *bench.Report {
	t.Helper()
	out := benchRun(t, env, append(args, "--json")...)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &fields); err != nil {
		t.Fatalf("bench --json printed %q: %v", out, err)
	}
	for _, k := range []string{"calls", "errors", "calls_per_sec", "mean_us", "p50_us", "p99_us", "p999_us", "max_us", "providers", "timeline", "cpu_us_per_call", "reconnects", "heartbeat_closes"} {
		if _, ok := fields[k]; !ok {
			t.Fatalf("bench --json lacks %q:\n%s", k, out)
		}
	}
	var r bench.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var errs, tlCalls int64
	tlErrs := map[string]int64{}
	for _, n := range r.Errors {
		errs += n
	}
	for i, s := range r.Timeline {
		if s.Second != i {
			t.Fatalf("timeline entry %d is second %d", i, s.Second)
		}
		tlCalls += s.Calls
		for k, n := range s.Errors {
			tlErrs[k] += n
		}
	}
	if r.OK+errs != r.Calls || tlCalls != r.Calls {
		t.Fatalf("calls %d, ok %d, errors %d, timeline calls %d:\n%s", r.Calls, r.OK, errs, tlCalls, out)
	}
	for k, n := range r.Errors {
		if tlErrs[k] != n {
			t.Fatalf("errors[%s] = %d, timeline has %d", k, n, tlErrs[k])
		}
	}
	if r.OK > 0 && !(r.P50US > 0 && r.P50US <= r.P99US && r.P99US <= r.P999US && r.P999US <= r.MaxUS && r.MeanUS > 0 && r.CallsPerSec > 0) {
		t.Fatalf("latencies out of order:\n%s", out)
	}
	return &r
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func TestBench_JSONTotals(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := benchJSON(t, nil, p.url("demo.Echo"), "-n", "2000", "-c", "10", "--server-pid", strconv.Itoa(p.cmd.Process.Pid))
	if r.Calls != 2000 || r.OK != 2000 || len(r.Errors) != 0 || r.Concurrency != 10 {
		t.Fatalf("report %+v", r)
	}
	if len(r.Providers) != 1 || r.Providers[p.addr] != 2000 {
		t.Fatalf("providers %v, want %s: 2000", r.Providers, p.addr)
	}
	if r.CPUUS <= 0 || r.ServerCPUUS < 0 {
		t.Fatalf("cpu per call %v, server %v", r.CPUUS, r.ServerCPUUS)
	}
}

func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := before
	for start := time.Now(); after == before && time.Since(start) < 10*time.Second; {
		for spin := time.Now(); time.Since(spin) < 20*time.Millisecond; {
		}
		if after, err = processCPU(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if after <= before {
		t.Fatalf("cpu %v then %v after spinning", before, after)
	}
	if _, err := processCPU(1 << 30); err == nil {
		t.Fatal("no error for a missing process")
	}
}

// Request and response sizes that differ go through Payload with a padded
// request; the human summary names every figure.
func TestBench_PayloadSizesAndSummary(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := benchJSON(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "3", "--req", "1000", "--resp", "100", "--connections", "2")
	if r.OK != 300 {
		t.Fatalf("report %+v", r)
	}
	out := benchRun(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "3", "--baseline")
	for _, s := range []string{"calls/s", "p99.9", "errors      none", "µs/call", p.addr + " 300", "baseline", "airnode / baseline"} {
		if !strings.Contains(out, s) {
			t.Fatalf("summary lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "\r") {
		t.Fatalf("progress bar drawn into a pipe:\n%q", out)
	}
	// 1 MiB responses from 2 background callers on the same connection
	out = benchRun(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "2", "--mix-resp", "1048576", "--mix-c", "2", "--json")
	var m struct {
		Calls      int64 `json:"calls"`
		Background struct {
			Resp, Concurrency int
			Calls, Errors     int64
		} `json:"background"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Calls != 300 || m.Background.Resp != 1048576 || m.Background.Concurrency != 2 || m.Background.Errors != 0 {
		t.Fatalf("--mix-resp: %v\n%s", err, out)
	}
}

func TestBench_Duration(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	start := time.Now()
	r := benchJSON(t, nil, p.url("demo.Echo"), "--duration", "1s", "-c", "4", "--warmup", "100")
	if el := time.Since(start); el < time.Second {
		t.Fatalf("finished after %v", el)
	}
	if r.Calls == 0 || r.ElapsedSec < 1 || r.ElapsedSec > 5 || len(r.Timeline) < 1 || len(r.Timeline) > 2 {
		t.Fatalf("report %+v", r)
	}
}

// A service key alone resolves through the default file registry; with
// roundrobin over two providers, each takes half of the calls.
func TestBench_ServiceKeyThroughDefaultRegistry(t *testing.T) {
	runtime := t.TempDir()
	regDir := filepath.Join(runtime, "airnode", "registry")
	if err := os.MkdirAll(regDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p1 := serve(t, "127.0.0.1:0", regDir)
	p2 := serve(t, "127.0.0.1:0", regDir)
	r := benchJSON(t, []string{"XDG_RUNTIME_DIR=" + runtime}, "demo.Echo?loadbalance=roundrobin", "-n", "1000", "-c", "2", "--warmup", "0")
	if r.OK != 1000 || len(r.Providers) != 2 || r.Providers[p1.addr] < 400 || r.Providers[p2.addr] < 400 || sum(r.Providers) != 1000 {
		t.Fatalf("providers %v (want %s and %s about 500 each), report %+v", r.Providers, p1.addr, p2.addr, r)
	}
}

// The provider is killed about 1 s into a 4 s run: the calls after it fail, are
// counted by status, and the timeline shows when.
func TestBench_ProviderKilledMidRun(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	go func() {
		time.Sleep(2 * time.Second) // start-up, warm-up, then about 1 s measured
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}()
	r := benchJSON(t, nil, p.url("demo.Echo")+"?reconnect.backoff=50ms", "--duration", "4s", "-c", "2", "--warmup", "100", "--timeout", "500ms")
	if r.OK == 0 || len(r.Errors) == 0 || r.Providers[p.addr] == 0 {
		t.Fatalf("report %+v", r)
	}
	for name := range r.Errors {
		if _, ok := spi.ParseStatus(name); !ok && name != channelInactiveSent && name != channelInactiveNotSent {
			t.Fatalf("error status %q is not a status name", name)
		}
	}
	last := r.Timeline[len(r.Timeline)-1]
	if first := r.Timeline[0]; first.Calls <= sum(first.Errors) || sum(last.Errors) == 0 || sum(last.Errors) != last.Calls {
		t.Fatalf("timeline %+v, want calls then only errors", r.Timeline)
	}
	// With no provider usable, each caller backs off up to 100 ms: about
	// 20 failures a second here, where spinning callers made 100,000s.
	if n := sum(r.Errors); n > 2000 {
		t.Fatalf("%d failed calls in about 2 s without a provider: the callers do not back off; timeline %+v", n, r.Timeline)
	}
	t.Logf("errors %v; timeline %+v", r.Errors, r.Timeline)
}

func TestBench_BadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"airnode://127.0.0.1:1/demo.Echo", "-c", "0"},
		{"airnode://127.0.0.1:1/demo.Echo", "--connections", "65"},
		{"airnode://127.0.0.1:1/demo.Echo", "--req", "-1"},
		{"airnode://127.0.0.1:1/demo.Echo", "--warmup", "-5"}, // fix-h: was taken as the default warm-up
	} {
		cmd := exec.Command(binary, append([]string{"bench"}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.HasPrefix(string(out), "airnode: bench: ") {
			t.Errorf("bench %v: %v, %q; want exit 2 (a usage error, fix-p) and airnode: bench: ...", args, err, out)
		}
	}
}

// --idle opens connections straight on the exchange and reads the
// provider's RSS; --idle without --server-pid is refused.
func TestBench_IdleConnections(t *testing.T) {
	var p *provider
	for _, transport := range []string{"smux", "tcp"} {
		p = serve(t, "127.0.0.1:0", t.TempDir(), "--transport", transport)
		out := benchRun(t, nil, p.url("demo.Echo"), "--idle", "50", "--server-pid", strconv.Itoa(p.cmd.Process.Pid), "-p", "transport="+transport, "--json")
		var r struct {
			Connections int     `json:"idle_connections"`
			Transport   string  `json:"transport"`
			Before      int64   `json:"rss_before_kib"`
			After       int64   `json:"rss_after_kib"`
			PerConn     float64 `json:"kib_per_connection"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if r.Connections != 50 || r.Transport != transport || r.Before <= 0 || r.After <= 0 {
			t.Fatalf("idle report %+v", r)
		}
	}
	cmd := exec.Command(binary, "bench", p.url("demo.Echo"), "--idle", "5")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--server-pid") {
		t.Fatalf("--idle without --server-pid: %v, %s", err, out)
	}
	// group=* would have sent "*/demo.Echo" on every connection
	cmd = exec.Command(binary, "bench", p.url("demo.Echo")+"?group=*", "--idle", "5", "--server-pid", strconv.Itoa(p.cmd.Process.Pid))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "one group and one version") {
		t.Fatalf("--idle with group=*: %v, %s", err, out)
	}
}

// The configuration's reference of demo.Echo gives bench its defaults as it
// does call: here the token the provider requires.
func TestBench_ConfigReference(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "token=s3cret")
	cfg := writeConfig(t, "references:\n  - {interface: demo.Echo, params: {token: s3cret}}\n")
	r := benchJSON(t, nil, "--config", cfg, p.url("demo.Echo"), "-n", "50", "--warmup", "0")
	if r.OK != 50 || len(r.Errors) != 0 {
		t.Fatalf("with the reference's token: report %+v", r)
	}
}

// When every call fails, bench exits 1 with the first error's full message
// once on stderr, and prints no latency as if the calls had succeeded.
// (A service the provider does not export is refused before the run:
// TestDX_BenchDirectRefusesServiceNotFound; demo.Echo's Fail fails every
// call.)
func TestBench_AllCallsFail(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, asJSON := range []bool{false, true} {
		args := []string{"bench", p.url("demo.Echo"), "--method", "Fail", "--args", `"boom"`, "-n", "100", "--warmup", "0"}
		if asJSON {
			args = append(args, "--json")
		}
		cmd := exec.Command(binary, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		want := `SERVICE_ERROR: boom (provider ` + p.addr + `)`
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Count(errb.String(), want) != 1 ||
			!strings.Contains(errb.String(), "all 100 calls failed") {
			t.Fatalf("bench %v: %v, stderr %q; want exit 1 and %q once", args, err, errb.String(), want)
		}
		if asJSON {
			var r bench.Report
			if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.OK != 0 || r.Calls != 100 || r.MaxUS != 0 || r.MeanUS != 0 || r.FirstError != want {
				t.Fatalf("--json: %v %+v", err, r)
			}
			continue
		}
		s := out.String()
		if !strings.Contains(s, "latency     n/a: no call succeeded") || strings.Contains(s, "mean 0.000") ||
			!strings.Contains(s, "100 of 100 calls FAILED (100.0%): SERVICE_ERROR 100") || strings.Contains(s, "first error") ||
			!strings.Contains(s, "attempts    "+p.addr) || !strings.Contains(s, "none succeeded") {
			t.Fatalf("summary:\n%s", s)
		}
	}
}

// When some calls fail, the summary shows their share and the first error
// before the figures, and labels latency as that of the successful calls.
func TestBench_SomeCallsFailSummary(t *testing.T) {
	r := &bench.Report{Calls: 200, OK: 150, Errors: map[string]int64{"CLIENT_TIMEOUT": 50}, Concurrency: 2, ElapsedSec: 1,
		CallsPerSec: 200, MeanUS: 300, P50US: 250, P99US: 900, P999US: 950, MaxUS: 1000,
		FirstError: "CLIENT_TIMEOUT: call timed out after 1ms", Providers: map[string]int64{"127.0.0.1:1": 260}}
	var out bytes.Buffer
	printOutcome(&out, "demo.Echo", benchOutcome{Report: r, Case: &benchCase{Req: 100, Resp: 100, Concurrency: 2}}, benchFlags{connections: 1})
	s := out.String()
	lines := strings.Split(s, "\n")
	if len(lines) < 4 || lines[1] != "  errors      50 of 200 calls FAILED (25.0%): CLIENT_TIMEOUT 50" ||
		lines[2] != "  first error CLIENT_TIMEOUT: call timed out after 1ms" ||
		!strings.Contains(s, "calls/s     200 (150 successful)") ||
		!strings.Contains(s, "latency     of the 150 successful calls: mean 0.300 ms") ||
		!strings.Contains(s, "attempts    127.0.0.1:1 260  (per provider; a failover retry counts again)") {
		t.Fatalf("summary:\n%s", s)
	}
}

// --duration is a time limit: the warm-up takes at most a tenth of it more
// however many calls --warmup asks for; zero and negative are refused.
func TestBench_DurationBoundsWarmup(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	start := time.Now()
	r := benchJSON(t, nil, p.url("demo.Echo"), "--duration", "1s", "-c", "2", "--warmup", "200000")
	if el := time.Since(start); el > 6*time.Second || r.Calls == 0 || r.ElapsedSec > 3 {
		t.Fatalf("--duration 1s with --warmup 200000 took %v, report %+v", el, r)
	}
	for _, d := range []string{"-1s", "0s"} {
		cmd := exec.Command(binary, "bench", p.url("demo.Echo"), "--duration", d)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.HasPrefix(string(out), "airnode: bench: --duration "+d+": want a positive duration") { // a usage error (fix-p)
			t.Errorf("--duration %s: %v, %q", d, err, out)
		}
	}
	// Tester8: -n with --duration silently ran for the duration.
	out, err := exec.Command(binary, "bench", p.url("demo.Echo"), "-n", "10", "--duration", "1s").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "-n 10 and --duration 1s both given") {
		t.Errorf("-n with --duration: %v, %q", err, out)
	}
}

// A --server-pid that is not a process, or one that used no CPU during the
// run, gets a warning on stderr instead of silently no server CPU figure.
func TestBench_ServerPIDWarnings(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	idle := exec.Command("sleep", "60")
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idle.Process.Kill(); _ = idle.Wait() })
	for pid, want := range map[int]string{
		1 << 30:          "airnode: bench: warning: --server-pid 1073741824: open /proc/1073741824/stat: no such file or directory; server CPU not reported",
		idle.Process.Pid: "airnode: bench: warning: --server-pid " + strconv.Itoa(idle.Process.Pid) + " used no CPU time during the measured phase",
	} {
		cmd := exec.Command(binary, "bench", p.url("demo.Echo"), "-n", "300", "--warmup", "0", "--server-pid", strconv.Itoa(pid))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || strings.Count(errb.String(), want) != 1 || strings.Contains(out.String(), "server CPU") {
			t.Errorf("--server-pid %d: %v, stderr %q, stdout\n%s", pid, err, errb.String(), out.String())
		}
	}
}

// benchResult runs `airnode bench args...` and returns its outputs, exit
// code and wall time, whatever the exit code.
func benchResult(t *testing.T, args ...string) result {
	t.Helper()
	return runCommand(t, 60*time.Second, nil, "bench", args...)
}

// With no usable provider — nothing listening, a consumer on tcp against
// an smux provider, an empty registry — bench says why within a few
// seconds (it waited 10 s before the probing call) and exits 1 without a
// report.
func TestBench_NoUsableProviderFailsFast(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"airnode://127.0.0.1:1/demo.Echo"}, "connection refused"},
		{[]string{p.url("demo.Echo") + "?transport=tcp"}, "likely a transport mismatch (this consumer's transport=tcp, from SERVICE_URL key transport=tcp; try -p transport=smux)"},
		{[]string{"--registry", "file://" + t.TempDir(), "demo.Echo"}, "SERVICE_NOT_FOUND: no provider available for demo.Echo"},
	} {
		r := benchResult(t, append(c.args, "-n", "10")...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "airnode: bench: no provider of demo.Echo available: ") ||
			!strings.Contains(r.stderr, c.want) {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
		if r.elapsed > 5*time.Second {
			t.Errorf("bench %v: said why after %v, want a few seconds at most", c.args, r.elapsed)
		}
		t.Logf("bench %v: %v: %s", c.args, r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
	}
}

// A counted run whose provider is gone: the callers back off (a few
// failures a second each, not a spin) and the run stops once no provider
// has been usable for deadStop, reporting the calls it made.
func TestBench_DeadProviderBacksOffAndStopsCountedRun(t *testing.T) {
	defer func(d time.Duration) { deadStop = d }(deadStop)
	deadStop = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer prov.Close()
	exp, err := prov.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	ref := refer(t, "airnode://"+exp.URL().Address()+"/demo.Echo?reconnect.backoff=50ms&timeout=500ms")
	if err := waitProviders(ctx, ref); err != nil {
		t.Fatal(err)
	}
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		time.Sleep(300 * time.Millisecond)
		_ = prov.Close()
	}()
	start := time.Now()
	cfg := bench.Config{Calls: 1 << 40, Concurrency: 2, Warmup: 0}
	r, err := benchAirnode(ctx, ref, &cutAttempts{}, cfg, benchCase{Req: 10, Resp: 10, Concurrency: 2}, "test", nil, 0, func(string, ...any) {})
	<-killed
	var stopped *stoppedError
	if !errors.As(err, &stopped) || r == nil || stopped.done != r.Calls || stopped.planned != cfg.Calls {
		t.Fatalf("benchAirnode: %+v, %v; want the report and *stoppedError", r, err)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Fatalf("stopped after %v, want about 0.3 s + deadStop (1 s)", el)
	}
	if r.OK == 0 || sum(r.Errors) == 0 || sum(r.Errors) > 1000 {
		t.Fatalf("ok %d, errors %v: want successes, then a few failures a second per caller", r.OK, r.Errors)
	}
	o := benchOutcome{Report: r, Case: &benchCase{Name: "10/10 B c=2", Req: 10, Resp: 10, Concurrency: 2}, Stopped: stopped.Error()}
	var out bytes.Buffer
	printOutcome(&out, "demo.Echo", o, benchFlags{connections: 1})
	want := fmt.Sprintf("  stopped     after %d of %d calls: no provider of demo.Echo usable for 1s\n", r.Calls, cfg.Calls)
	// The first failure is the connection's death, or a request that
	// crossed the provider's go-away, answered "did not run"
	// (SERVICE_NOT_FOUND) by the closing provider: which one comes first
	// is timing.
	if s := out.String(); !strings.Contains(s, want) ||
		!strings.Contains(s, "first error CHANNEL_INACTIVE") && !strings.Contains(s, "first error SERVICE_NOT_FOUND: exchange: the provider is closing this connection and did not run the request") {
		t.Fatalf("summary:\n%s\nwant %q and the first error", s, want)
	}
	if err := runError([]benchOutcome{o}); err == nil || err.Error() != "bench: 10/10 B c=2: "+o.Stopped {
		t.Fatalf("runError: %v", err)
	}
	t.Logf("%v; ok %d, errors %v", err, r.OK, r.Errors)
}

// --paper's table explains only the columns it prints: without --baseline
// there are no raw or ratio columns, and the note does not mention them;
// a case where no call succeeded shows no latency.
func TestBench_PaperNoteOnlyMentionsPrintedColumns(t *testing.T) {
	rep := func(ok int64) *bench.Report {
		r := &bench.Report{Calls: 100, OK: ok, Errors: map[string]int64{}, CallsPerSec: 1000, MeanUS: 200, P99US: 300, MaxUS: 400}
		if ok == 0 {
			r.Errors["CHANNEL_INACTIVE"], r.MeanUS, r.P99US, r.MaxUS = 100, 0, 0, 0
		}
		return r
	}
	outcomes := []benchOutcome{{Report: rep(100), Case: &paperCases[0]}, {Report: rep(0), Case: &paperCases[4]}}
	for _, baseline := range []bool{false, true} {
		if baseline {
			for i := range outcomes {
				outcomes[i].Baseline = rep(100)
			}
		}
		var out bytes.Buffer
		printPaper(&out, outcomes, benchFlags{connections: 1, baseline: baseline})
		s := out.String()
		if strings.Contains(s, "ratio") != baseline || strings.Contains(s, "raw") != baseline {
			t.Errorf("--baseline %v: the table mentions ratios or raw figures %v:\n%s", baseline, !baseline, s)
		}
		if !strings.Contains(s, "paper: the AirRPC paper's mean per call as published") ||
			!regexp.MustCompile(`(?m)^100/100 B c=10000\s+collapsed\s+n/a\s+n/a\s+n/a\s+1000\s+CHANNEL_INACTIVE 100`).MatchString(s) {
			t.Errorf("--baseline %v:\n%s", baseline, s)
		}
		if regexp.MustCompile(`(?m) $`).MatchString(s) {
			t.Errorf("--baseline %v: lines end in spaces:\n%q", baseline, s)
		}
	}
}

// bench --json prints one {"error", "calls": 0} object on stdout, exit 1,
// also when cobra fails before the command runs: an unknown flag, a bad
// flag value, a missing SERVICE_URL, a bad global flag. Without --json (or
// with --json=false) stdout stays empty.
func TestBench_JSONOnFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--json", "airnode://127.0.0.1:1/demo.Echo", "--bogus"},
		{"airnode://127.0.0.1:1/demo.Echo", "--bogus", "--json"},
		{"-n", "abc", "--json", "demo.Echo"},
		{"--json"},
		{"--json", "--log-format", "xml", "demo.Echo"},
	} {
		r := runCommand(t, 20*time.Second, nil, "bench", args...)
		var got benchFailure
		// a usage error exits 2 (tester nu41), --log-format xml too (a
		// flag value of the wrong form: nu54 finding 3)
		want := exitUsage
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != want || got.Error == "" || got.Calls != 0 ||
			r.stderr != "airnode: "+got.Error+"\n" {
			t.Errorf("bench %v: exit %d, stdout %q (%v), stderr %q; want exit %d, one JSON failure naming stderr's error", args, r.code, r.stdout, err, r.stderr, want)
		}
	}
	for _, args := range [][]string{
		{"airnode://127.0.0.1:1/demo.Echo", "--bogus"},
		{"--json=false", "airnode://127.0.0.1:1/demo.Echo", "--bogus"},
	} {
		if r := runCommand(t, 20*time.Second, nil, "bench", args...); r.code != exitUsage || r.stdout != "" {
			t.Errorf("bench %v: exit %d, stdout %q; want exit 2 (a usage error) and nothing on stdout", args, r.code, r.stdout)
		}
	}
	if jsonRequested([]string{"bench", "x", "--", "--json"}) || !jsonRequested([]string{"--json=1", "bench"}) || jsonRequested([]string{"--json", "--json=false"}) {
		t.Error("jsonRequested: want the last --json or --json=BOOL before -- to decide")
	}
}

// Tester finding (item 13): -n 0 said "must be positive" but -n -5 "want
// 0 or more"; --req -1 blamed --resp too (it defaults to --req). One
// message for -n, and only the flag given is named.
func TestBenchFlagMessagesNameTheFlagGiven(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"-n 0":               "airnode: bench: -n 0: want a positive number of calls (or give --duration)\n",
		"-n -5":              "airnode: bench: -n -5: want a positive number of calls (or give --duration)\n",
		"--req -1":           "airnode: bench: --req -1: want 0 or more bytes\n",
		"--req 10 --resp -2": "airnode: bench: --resp -2: want 0 or more bytes\n",
		"-a token=x":         "airnode: bench: -a \"token=***\": attachment \"token\" is reserved by the kernel (reserved: remote, timeout, token); a token comes from -p token=***\n", // stderr redacts tokens
		"-a tOkEn=LEAKB":     "airnode: bench: -a \"tOkEn=***\": attachment \"tOkEn\" is reserved by the kernel (reserved: remote, timeout, token); a token comes from -p token=***\n", // any case (tester49 finding 5)
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "bench", append([]string{"airnode://127.0.0.1:1/demo.Echo"}, strings.Fields(args)...)...)
		code := exitUsage // a value out of bounds (fix-p) or an -a of the wrong form (nu41): a usage error
		if r.code != code || r.stderr != want {
			t.Errorf("bench %s: exit %d, stderr %q; want %d and %q", args, r.code, r.stderr, code, want)
		}
	}
}

// bench -a sends an attachment with every call, as call's -a does
// (TestCallSendsAttachments shows it reaching the provider).
func TestBench_Attachments(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := benchJSON(t, nil, p.url("demo.Echo"), "-n", "200", "-c", "4", "-a", "tenant=x", "-a", "trace=1")
	if r.Calls != 200 || r.OK != 200 || len(r.Errors) != 0 {
		t.Fatalf("report %+v", r)
	}
}

// Large requests beside large answers on one smux connection: the
// provider stops reading while 8 MiB of its answers are unread, and the
// consumer's 1 MiB requests, each on a stream of its own, filled the
// provider's smux session buffer, whose receiver then read nothing more,
// not even the window updates the 2 MiB answers waited for: no call ever
// completed (tester57; 2 runs of 2 on a28830a: 64 SERVER_TIMEOUT, 0
// calls). The consumer's stream credit (extensions/transport/smux,
// credit.go) keeps a quarter of that buffer free: calls complete in every
// second.
func TestBench_LargeRequestsBesideLargeAnswersDoNotStall(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "smux")
	r := benchJSON(t, nil, p.url("demo.Echo")+"?transport=smux", "--duration", "4s", "--timeout", "10s", "--warmup", "0",
		"-c", "64", "--req", "1MiB", "--resp", "100", "--mix-resp", "2MiB", "--mix-c", "16")
	if len(r.Errors) != 0 || r.Calls == 0 {
		t.Fatalf("calls %d, errors %v: the connection stalled; timeline %+v", r.Calls, r.Errors, r.Timeline)
	}
	// Seconds before the first call completed are the start (64 race-built
	// encodes of 1 MiB on a loaded machine took over a second, fix-p and
	// fix-q saw "second 0 completed no call"); after it, a second without a
	// completed call is a stall.
	first := slices.IndexFunc(r.Timeline, func(s bench.Second) bool { return s.Calls > 0 })
	for _, s := range r.Timeline[first : len(r.Timeline)-1] {
		if s.Calls == 0 {
			t.Fatalf("second %d completed no call: the connection stalled; timeline %+v", s.Second, r.Timeline)
		}
	}
	t.Logf("%d calls, timeline %+v", r.Calls, r.Timeline)
}

// metricsBench is a running `airnode bench ... --metrics 127.0.0.1:0`.
type metricsBench struct {
	addr string         // where its /metrics listens, from its "airnode bench: metrics" line
	out  *logbuf.Buffer // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // Wait's result, set before done is closed
}

var benchMetricsLine = regexp.MustCompile(`airnode bench: metrics" addr=(\S+)`)

// startMetricsBench starts `airnode bench args... --metrics 127.0.0.1:0
// --log-level info` and waits up to 15 s for the line naming the address
// its /metrics got (bench logs it at info). The bench is stopped at
// cleanup.
func startMetricsBench(t *testing.T, args ...string) *metricsBench {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"bench"}, args...), "--metrics", "127.0.0.1:0", "--log-level", "info")...)
	cmd.Env = hostEnviron()
	b := &metricsBench{out: &logbuf.Buffer{}, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b.out, b.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = cmd.Wait(); close(b.done) }()
	t.Cleanup(b.stop)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := benchMetricsLine.FindStringSubmatch(b.out.String()); m != nil {
			b.addr = m[1]
			return b
		}
		select {
		case <-b.done:
			t.Fatalf("bench %v exited (%v) before its metrics listened:\n%s", args, b.err, b.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("bench %v: no metrics address in 15 s:\n%s", args, b.out.String())
		}
	}
}

// stop interrupts the bench and waits for it (20 s, then kills it); it
// may be called more than once, and after the bench exited.
func (b *metricsBench) stop() {
	_ = b.cmd.Process.Signal(os.Interrupt)
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

// wait waits up to within for the bench to exit and returns its exit
// code.
func (b *metricsBench) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(within):
		t.Fatalf("bench still running after %v:\n%s", within, b.out.String())
	}
	return exitCode(t, b.err)
}

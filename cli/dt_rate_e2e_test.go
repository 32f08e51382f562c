package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/internal/testaddr"
)

// rateReport is what these tests read of bench --json with --rate.
type rateReport struct {
	bench.Report
	Workload benchCase `json:"workload"`
}

// benchRate runs the real binary's bench with args and --json and
// decodes its report, failing the test unless it exits 0.
func benchRate(t *testing.T, args ...string) rateReport {
	t.Helper()
	r := runCommand(t, 90*time.Second, nil, "bench", append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("bench %v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	var rr rateReport
	if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil || rr.OpenLoop == nil {
		t.Fatalf("bench %v: %v, no open-loop report in %s", args, err, r.stdout)
	}
	return rr
}

// fix-dt: --rate 200 --duration 2s makes the 400 calls intended in the
// 2 s (±10 %), reports the rate asked and reached and the late starts,
// and keeps the closed loop's keys (the timeline among them).
func TestDT_BenchRateMakesItsCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	rr := benchRate(t, p.url("demo.Echo"), "--rate", "200", "--duration", "2s")
	o := rr.OpenLoop
	if rr.Calls < 360 || rr.Calls > 440 || rr.OK != rr.Calls || o.Rate.Asked != 200 || math.Abs(o.Rate.Reached-200) > 20 {
		t.Fatalf("%d calls (%d ok), rate %+v: want 400 ± 10 %% at about 200/s", rr.Calls, rr.OK, o.Rate)
	}
	if o.Rate.Callers < 1 || rr.Concurrency != rateCallers || rr.Workload.Rate != 200 {
		t.Fatalf("callers %d of %d, workload %+v: want -c's default with --rate, %d, as the bound", o.Rate.Callers, rr.Concurrency, rr.Workload, rateCallers)
	}
	var tl int64
	for _, s := range rr.Timeline {
		tl += s.Calls
	}
	if tl != rr.Calls || len(rr.Timeline) < 2 {
		t.Fatalf("timeline %+v: want its seconds to add up to the %d calls", rr.Timeline, rr.Calls)
	}
}

// fix-dt: Sleep(100) at 20 calls/s with one caller: each call starts
// 50 ms later than the one before it was intended to; the latency counts
// from the intended start (the tenth call's is about 550 ms, not 100)
// and the calls are counted late. With callers enough, none is.
func TestDT_BenchRateCountsLatencyFromIntendedStart(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	late := benchRate(t, p.url("demo.Echo"), "--rate", "20", "-c", "1", "-n", "10", "--method", "Sleep", "--args", "100")
	if o := late.OpenLoop; late.OK != 10 || o.LateStarts != 9 || o.LateWorstUS < 350_000 || late.MaxUS < 450_000 || o.Rate.Reached > 15 {
		t.Fatalf("report %+v, open loop %+v: want 10 calls, 9 late by up to 450 ms, the last one's latency about 550 ms, about 10/s reached", late.Report, o)
	}
	ok := benchRate(t, p.url("demo.Echo"), "--rate", "20", "-c", "20", "-n", "10", "--method", "Sleep", "--args", "100")
	if o := ok.OpenLoop; ok.OK != 10 || o.LateStarts != 0 || ok.P50US >= late.P50US || ok.P50US < 100_000 {
		t.Fatalf("report %+v, open loop %+v: want 10 calls, none late, a median of about 100 ms (the one-caller run's: %.0f µs)", ok.Report, o, late.P50US)
	}
}

// fix-dt: a --rate that is not a positive number, or given with a flag
// that makes no open loop, is a usage error naming --rate and what is
// allowed.
func TestDT_BenchRateRefused(t *testing.T) {
	u := "airnode://127.0.0.1:1/demo.Echo" // refused before any dial
	for _, v := range []string{"0", "-1", "NaN", "fast", "Inf", "0.0001", "2000000"} {
		r := runCommand(t, 30*time.Second, nil, "bench", u, "--rate", v)
		expectUsage(t, r, "airnode: bench: --rate "+v+": want calls per second", "0.001 to 1000000")
	}
	for flag, why := range map[string]string{"--paper": "closed loops", "--baseline": "closed loop", "--idle=3": "no calls"} {
		r := runCommand(t, 30*time.Second, nil, "bench", u, "--rate", "10", flag)
		expectUsage(t, r, "airnode: bench: --rate 10 and "+strings.TrimSuffix(flag, "=3")+" both given", why)
	}
}

// fix-dt, case H3 from the command line: bench --rate 0.5 against a
// provider killed right after the first call and restarted on the same
// address 1 s later, no call in between: the next calls succeed, the
// consumer having reconnected by itself.
func TestDT_BenchRateH3ProviderRestarted(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, testaddr.Reserved(t), dir, "-p", "accesslog=true") // held to the end: restarted on it
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "bench", p.url("demo.Echo"), "--rate", "0.5", "--duration", "9s", "--json")
	cmd.Env = hostEnviron()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, "the first call in the provider's access log", func() bool {
		return strings.Contains(p.logText(), "msg=access component=accesslog side=provider")
	})
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t, 5*time.Second)
	time.Sleep(time.Second)
	p2 := serve(t, p.addr, dir, "-p", "accesslog=true")
	if err := <-done; err != nil {
		t.Fatalf("bench: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	var rr rateReport
	if err := json.Unmarshal(out.Bytes(), &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Calls != 5 || rr.OK != 5 || len(rr.Errors) != 0 {
		t.Fatalf("%d calls, %d ok, errors %v: want the 5 calls at 0, 2, 4, 6 and 8 s to succeed\nstderr %s", rr.Calls, rr.OK, rr.Errors, errb.String())
	}
	if n := strings.Count(p2.logText(), "msg=access component=accesslog side=provider"); n != 4 {
		t.Fatalf("the restarted provider logged %d calls, want the 4 after the first\n%s", n, p2.logText())
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// A call whose consumer went away (Ctrl-C on `airnode call ... Sleep
// 5000`) was counted SERVICE_ERROR by the provider's stats, the method
// having returned ctx.Err(): a service that "fails". It is counted as
// cancelled, apart from the failures, in /stats, `airnode stats` and
// /metrics; a real failure (Fail) still is one.
func TestE2E_StatsCountsACallTheConsumerAbandonedAsCancelled(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "call", "--timeout", "20s", p.url("demo.Echo"), "Sleep", "5000")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inFlight := func() bool {
		rep, err := metrics.Fetch(ctx, m[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rep.Methods {
			if row.Side == spi.Provider && row.Method == "Sleep" && row.InFlight == 1 {
				return true
			}
		}
		return false
	}
	waitFor(t, "the Sleep call in flight on the provider", inFlight)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(errb.String(), "interrupted by SIGINT") {
		t.Fatalf("call after SIGINT: %v, stderr %q", err, errb.String())
	}
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Fail", `"boom"`), "SERVICE_ERROR")

	var sleep, fail metrics.MethodStats
	waitFor(t, "the cancelled call counted", func() bool {
		rep, err := metrics.Fetch(ctx, m[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rep.Methods {
			if row.Side != spi.Provider {
				continue
			}
			switch row.Method {
			case "Sleep":
				sleep = row
			case "Fail":
				fail = row
			}
		}
		return sleep.Count == 1 && fail.Count == 1
	})
	if sleep.Cancelled != 1 || sleep.Failures != 0 || len(sleep.FailuresByStatus) != 0 || sleep.InFlight != 0 {
		t.Errorf("/stats Sleep row %+v: want 1 call, cancelled, no failure", sleep)
	}
	if fail.Cancelled != 0 || fail.Failures != 1 || fail.FailuresByStatus["SERVICE_ERROR"] != 1 {
		t.Errorf("/stats Fail row %+v: want 1 SERVICE_ERROR", fail)
	}
	r := runCommand(t, 20*time.Second, nil, "stats", m[1])
	if r.code != 0 {
		t.Fatalf("stats: exit %d: %s", r.code, r.stderr)
	}
	t.Logf("airnode stats:\n%s", r.stdout)
	var line string
	for l := range strings.SplitSeq(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "provider" && f[2] == "Sleep" {
			line = l
		}
	}
	// SIDE SERVICE METHOD COUNT SUCCESS MEAN P99 TPS IN-FLIGHT CANCELLED (FAILURES empty)
	if f := strings.Fields(line); len(f) != 10 || f[3] != "1" || f[4] != "-" || f[9] != "1" {
		t.Errorf("stats Sleep line %q: want count 1, success -, cancelled 1, no failures", line)
	}
	body := getMetrics(t, m[1])
	if want := `airnode_calls_cancelled_total{method="Sleep",service="demo.Echo",side="provider"} 1`; !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %q", want)
	}
	if strings.Contains(body, `airnode_call_failures_total{method="Sleep"`) {
		t.Error("/metrics counts the cancelled Sleep as a failure")
	}
}

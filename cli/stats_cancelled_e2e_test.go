package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
)

// A call whose consumer went away (Ctrl-C on `airnode call ... Sleep
// 5000`, or a consumer that exits once its own timeout fired) was counted
// SERVICE_ERROR by the provider's stats, the method having returned
// ctx.Err(): a service that "fails". It is counted as cancelled, apart
// from the failures, in /stats, `airnode stats` and /metrics; a real
// failure (Fail) still is one.
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
	// A consumer timeout: the provider sees its copy of the deadline pass
	// (SERVER_TIMEOUT) or, when the consumer exits first, the connection
	// close (cancelled); never SERVICE_ERROR.
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Sleep", "3000", "--timeout", "300ms"), "SERVER_TIMEOUT")

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
		return sleep.Count == 2 && fail.Count == 1
	})
	if sleep.Cancelled+sleep.FailuresByStatus["SERVER_TIMEOUT"] != 2 || sleep.Cancelled < 1 || sleep.FailuresByStatus["SERVICE_ERROR"] != 0 || sleep.InFlight != 0 {
		t.Errorf("/stats Sleep row %+v: want 2 calls, the interrupted one cancelled, the timed-out one cancelled or SERVER_TIMEOUT, no SERVICE_ERROR", sleep)
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
	// SIDE SERVICE METHOD COUNT SUCCESS MEAN P99 TPS/10s TPS/avg IN-FLIGHT CANCELLED FAIL/10s [FAILURES]
	if f := strings.Fields(line); len(f) < 11 || f[3] != "2" || f[10] != strconv.FormatInt(sleep.Cancelled, 10) || strings.Contains(line, "SERVICE_ERROR") {
		t.Errorf("stats Sleep line %q: want count 2, cancelled %d, no SERVICE_ERROR", line, sleep.Cancelled)
	}
	body := getMetrics(t, m[1])
	if want := fmt.Sprintf(`airnode_calls_cancelled_total{method="Sleep",service="demo.Echo",side="provider"} %d`, sleep.Cancelled); !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %q", want)
	}
	if strings.Contains(body, `airnode_call_failures_total{method="Sleep",service="demo.Echo",side="provider",status="SERVICE_ERROR"}`) {
		t.Error("/metrics counts a cancelled Sleep as SERVICE_ERROR")
	}
}

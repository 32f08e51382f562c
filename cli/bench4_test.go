package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// Tester33 F2: the last timeline entry of `bench --json --duration` holds
// only the calls in flight at the deadline; its providers_per_sec was a
// copy of the previous second's rate or a rate extrapolated from a sliver
// (102,432/s beside 8 calls). It now has the attempts taken in it, which
// add up to about its calls, as every entry's do.
func TestBench4_LastTimelineSecondIsNotExtrapolated(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := benchJSON(t, nil, p.url("demo.Echo"), "--duration", "2s", "-c", "8", "--warmup", "0")
	tl := r.Timeline
	if len(tl) != 3 {
		t.Fatalf("timeline of %d seconds; want 3 (2 full, then the calls in flight at the deadline): %+v", len(tl), tl)
	}
	total := func(m map[string]float64) float64 {
		var n float64
		for _, v := range m {
			n += v
		}
		return n
	}
	last, full := tl[2], tl[1]
	t.Logf("second 1: calls %d, providers_per_sec %v; second 2: calls %d, providers_per_sec %v", full.Calls, full.ProvidersPerSec, last.Calls, last.ProvidersPerSec)
	if last.Calls < 1 || last.Calls > 8 {
		t.Fatalf("last second has %d calls; want 1 to 8 (the callers' calls in flight at the deadline)", last.Calls)
	}
	if got := total(last.ProvidersPerSec); got > float64(last.Calls)+0.5 {
		t.Fatalf("last second: providers_per_sec %v adds up to %.1f beside %d calls; want at most its calls", last.ProvidersPerSec, got, last.Calls)
	}
	if got, calls := total(full.ProvidersPerSec), float64(full.Calls); got < calls/2 || got > calls*3/2 {
		t.Fatalf("second 1: providers_per_sec %v adds up to %.1f beside %d calls; want within half of them", full.ProvidersPerSec, got, full.Calls)
	}
}

// failEveryOther is a demo.Echo whose Echo fails every other call with
// SERVER_ERROR (a framework failure, which failsafe swallows; a plain Go
// error, SERVICE_ERROR, is a business error it returns).
type failEveryOther struct{ n atomic.Int64 }

func (f *failEveryOther) Echo(ctx context.Context, b []byte) ([]byte, error) {
	if f.n.Add(1)%2 == 0 {
		return nil, spi.Errorf(spi.StatusServerError, "bench4: the database is down")
	}
	return b, nil
}

// Tester33 F10: with cluster=failsafe, bench counted each swallowed
// failure as BAD_RESPONSE (its echo check failed on the zero result), a
// status the provider never sent. It is now "SERVER_ERROR (swallowed)",
// and bench --help says what BAD_RESPONSE and "(swallowed)" mean.
func TestBench4_FailsafeSwallowedIsNotBadResponse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u := "airnode://" + exportAsEcho(t, ctx, &failEveryOther{}) + "/demo.Echo?cluster=failsafe"
	r := benchJSON(t, nil, u, "-n", "200", "-c", "2", "--warmup", "0")
	if r.Errors["SERVER_ERROR (swallowed)"] < 50 || r.Errors["BAD_RESPONSE"] != 0 || r.OK < 50 || len(r.Errors) != 1 {
		t.Fatalf("errors %v, ok %d; want about 100 SERVER_ERROR (swallowed), no BAD_RESPONSE", r.Errors, r.OK)
	}
	if !strings.Contains(r.FirstError, "swallowed") || !strings.Contains(r.FirstError, "the database is down") {
		t.Fatalf("first_error %q; want it to say the cluster swallowed the provider's error", r.FirstError)
	}
	text := benchRun(t, nil, u, "-n", "200", "-c", "2", "--warmup", "0")
	if !strings.Contains(text, "SERVER_ERROR (swallowed) ") || strings.Contains(text, "BAD_RESPONSE") {
		t.Fatalf("bench's summary does not count SERVER_ERROR (swallowed):\n%s", text)
	}
	help := runCommand(t, 20*time.Second, nil, "bench", "--help")
	flat := strings.Join(strings.Fields(help.stdout), " ")
	for _, want := range []string{`"SERVER_ERROR (swallowed)"`, "BAD_RESPONSE is a reply that is not the echo"} {
		if !strings.Contains(flat, want) {
			t.Fatalf("bench --help lacks %q:\n%s", want, help.stdout)
		}
	}
}

// Tester33 F5: a one-shot `airnode call` picked among the providers
// connected when its first connection came up, so a provider restarted a
// moment ago (warm-up: weight 1 of 100) got 9 of 40 calls whenever it was
// the first to connect. call now waits for the listed providers' first
// connection attempts (as consistenthash does), so the cold one gets about
// its 1 %.
func TestBench4_OneShotCallHonoursWarmup(t *testing.T) {
	dir := t.TempDir()
	warm := serve(t, "127.0.0.1:0", dir, "-p", "warmup=1s")
	cold := serve(t, "127.0.0.1:0", dir) // warmup 10m: weight 1 of 100 for the next 6 s
	time.Sleep(1100 * time.Millisecond)  // warm's warm-up is over
	const n = 30
	pids := map[int]int{}
	var slowest time.Duration
	for range n {
		r := call(t, nil, "--registry", "file://"+dir, "demo.Echo", "Info")
		if r.code != 0 {
			t.Fatalf("call: exit %d: %s", r.code, r.stderr)
		}
		var info struct{ PID int }
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("call printed %q: %v", r.stdout, err)
		}
		pids[info.PID]++
		slowest = max(slowest, r.elapsed)
	}
	w, c := pids[warm.cmd.Process.Pid], pids[cold.cmd.Process.Pid]
	t.Logf("%d one-shot calls: warm provider %d, cold provider (weight 1 of 100) %d; slowest call %v", n, w, c, slowest)
	if w+c != n || c > 3 {
		t.Fatalf("calls by provider pid %v: warm (%d) %d, cold (%d) %d; want the cold one at most 3 of %d (its weight: 1 %%)", pids, warm.cmd.Process.Pid, w, cold.cmd.Process.Pid, c, n)
	}
}

package cli

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
)

// tester13 finding 1: a --req over the payload limit is refused before
// bench allocates it — 100000000000 ran the process out of memory (and
// --json printed nothing), 9223372036854775807 panicked in makeslice, and
// 1000000000 took 3.9 GB to fail every call. The message says the limit
// and the key that raises it; a provider registered with a larger payload
// limit takes a --req above 8 MiB.
func TestT13_1_ReqOverPayloadLimitIsRefusedUpFront(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	const want = "over the payload limit 8 MiB of "
	for _, req := range []string{"100000000000", "9223372036854775807", "1000000000", "8388609"} {
		r := benchResult(t, p.url("demo.Echo"), "-n", "10", "--req", req, "--json")
		var o benchFailure
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("--req %s --json: stdout %q: %v (stderr %q)", req, r.stdout, err, r.stderr)
		}
		if r.code != 1 || !strings.HasPrefix(o.Error, "bench: --req "+req+": "+want+p.addr) ||
			!strings.Contains(o.Error, "URL key payload") || !strings.Contains(o.Error, "want 0 to 8388584 bytes") ||
			strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "fatal error") {
			t.Fatalf("--req %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", req, r.code, r.stdout, r.stderr, want)
		}
		if r.elapsed > 10*time.Second {
			t.Fatalf("--req %s refused after %v, want at once", req, r.elapsed)
		}
	}
	r := benchResult(t, p.url("demo.Echo"), "-n", "1", "--req", "9223372036854775807")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "airnode: bench: --req 9223372036854775807: "+want) {
		t.Fatalf("text: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// the limit of the provider's registered URL applies: 9 MiB fits 16 MiB
	big := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "payload=16MiB")
	rep := benchJSON(t, nil, "demo.Echo", "--registry", big.reg, "-n", "2", "--warmup", "0", "--req", strconv.Itoa(9<<20))
	if rep.OK != 2 {
		t.Fatalf("--req 9 MiB against a provider with payload=16MiB: %+v", rep)
	}
}

// delayProxy forwards each connection it accepts to target after holding
// it for delay, so that a consumer's first connection (dial and ping)
// takes at least that long; it is closed at the end of the test.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	px := testproxy.New(t, target)
	px.SetConnectDelay(delay)
	return px.Addr()
}

// tester13 finding 5: with a --timeout shorter than the first connection
// takes, bench said "no provider of demo.Echo available: CLIENT_TIMEOUT
// ... waiting for a first connection" and exited 1 although the provider
// was up. The first connection now gets connect.timeout (here it takes
// 300 ms, through a proxy that holds it, against a 20 ms call timeout);
// when it does not come in time, the message says so.
func TestT13_5_TightTimeoutWaitsForTheFirstConnection(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	slow := delayProxy(t, p.addr, 300*time.Millisecond)
	rep := benchJSON(t, nil, "airnode://"+slow+"/demo.Echo", "-n", "200", "-c", "2", "--timeout", "20ms")
	if rep.Calls != 200 {
		t.Fatalf("report %+v; want 200 calls", rep)
	}
	// a first connection slower than twice connect.timeout and 1 s
	hung := delayProxy(t, p.addr, time.Minute)
	r := benchResult(t, "airnode://"+hung+"/demo.Echo", "-n", "10", "--timeout", "5ms", "-p", "connect.timeout=200ms")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "airnode: bench: no provider of demo.Echo ") || r.elapsed > 15*time.Second {
		t.Fatalf("exit %d after %v, stderr %q; want exit 1 within seconds", r.code, r.elapsed, r.stderr)
	}
	t.Logf("%v: %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
}

// tester13 findings 6 and 7: after SIGINT the attempts per provider add up
// to the calls (they exceeded them by the calls cut short), and a run
// interrupted during its warm-up has "timeline": [] (it was null).
func TestT13_6_InterruptedAttemptsAddUpAndTimelineIsAList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, addr := exportSlowEcho(t, ctx)
	type report struct {
		Calls       int64             `json:"calls"`
		Providers   map[string]int64  `json:"providers"`
		Timeline    []json.RawMessage `json:"timeline"`
		Interrupted bool              `json:"interrupted"`
	}
	t.Run("measured", func(t *testing.T) {
		r := interruptBench(t, addr, svc, "-n", "1000000", "--json")
		var o report
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("stdout %q: %v", r.stdout, err)
		}
		var tl int64
		for _, s := range o.Timeline {
			var sec struct{ Calls int64 }
			_ = json.Unmarshal(s, &sec)
			tl += sec.Calls
		}
		if r.code != 130 || !o.Interrupted || o.Calls == 0 || sum(o.Providers) != o.Calls || tl != o.Calls {
			t.Fatalf("exit %d: calls %d, providers %v, timeline %d; want exit 130 and the same sums\n%s", r.code, o.Calls, o.Providers, tl, r.stdout)
		}
	})
	t.Run("warm-up", func(t *testing.T) {
		r := interruptBench(t, addr, svc, "-n", "1000000", "--warmup", "100000", "--json")
		var o report
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("stdout %q: %v", r.stdout, err)
		}
		if r.code != 130 || !o.Interrupted || o.Calls != 0 || o.Timeline == nil || len(o.Timeline) != 0 ||
			!strings.Contains(r.stdout, `"timeline": []`) || sum(o.Providers) != 0 {
			t.Fatalf("exit %d, report %+v; want exit 130, no call and an empty timeline\n%s", r.code, o, r.stdout)
		}
	})
}

// tester13 finding 9: --json's ok_per_sec is the rate of successful calls
// (calls_per_sec counts failed ones too), and -c above -n is lowered to -n
// with a line that says so (it reported "100 callers" for 10 calls).
func TestT13_9_OKPerSecAndCallersAtMostCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	type report struct {
		Calls       int64   `json:"calls"`
		OK          int64   `json:"ok"`
		Concurrency int     `json:"concurrency"`
		ElapsedSec  float64 `json:"elapsed_sec"`
		CallsPerSec float64 `json:"calls_per_sec"`
		OKPerSec    float64 `json:"ok_per_sec"`
	}
	decode := func(r result) report {
		var o report
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || !strings.Contains(r.stdout, `"ok_per_sec"`) {
			t.Fatalf("stdout %q: %v", r.stdout, err)
		}
		return o
	}
	ok := decode(benchResult(t, p.url("demo.Echo"), "-n", "200", "--json"))
	if ok.OK != 200 || math.Abs(ok.OKPerSec-ok.CallsPerSec) > 1e-6*ok.CallsPerSec || ok.OKPerSec <= 0 {
		t.Fatalf("every call ok: %+v; want ok_per_sec = calls_per_sec", ok)
	}
	failed := decode(benchResult(t, p.url("demo.Echo"), "--method", "Fail", "--args", `"boom"`, "-n", "50", "--warmup", "0", "--json"))
	if failed.Calls != 50 || failed.OK != 0 || failed.OKPerSec != 0 || failed.CallsPerSec <= 0 {
		t.Fatalf("every call failed: %+v; want ok_per_sec 0 and calls_per_sec > 0", failed)
	}

	r := benchResult(t, p.url("demo.Echo"), "-n", "10", "-c", "100", "--json")
	if o := decode(r); r.code != 0 || o.Concurrency != 10 || o.Calls != 10 ||
		!strings.Contains(r.stderr, "airnode: bench: warning: -c 100 is more than -n 10: running 10 callers\n") {
		t.Fatalf("-n 10 -c 100: exit %d, %+v, stderr %q; want 10 callers and a line saying so", r.code, o, r.stderr)
	}
	r = benchResult(t, p.url("demo.Echo"), "-n", "10", "-c", "100")
	if r.code != 0 || !strings.Contains(r.stdout, ": 10 calls in ") || !strings.Contains(r.stdout, " s, 10 callers, ") {
		t.Fatalf("text: exit %d, stdout %q", r.code, r.stdout)
	}
}

package cli

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// tester84 #7: with a retry budget, a failed call's error said "skipped 2"
// (its retries not made) while /metrics' budget_refused counted one per
// call, and bench's summary said neither. bench now reports the retries
// made and the calls whose retries the budget paused, one count per call
// as the metric, named once with the errors' "skipped N" explained
// (retries_made, retries_paused_calls in --json). The attempts the
// providers took are the calls plus the retries made, which checks the
// count of retries; a run without retries prints no retries line.
func TestBE_BenchCountsRetriesPausedOncePerCall(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "executes=1")
	u := p.url("demo.Echo?retry.tokens=10&idempotent=true")
	args := []string{u, "--method", "Sleep", "--args", "20", "-c", "8", "-n", "200", "--warmup", "0"}
	out := benchRun(t, nil, append(args, "--json")...)
	var r struct {
		Calls      int64            `json:"calls"`
		Errors     map[string]int64 `json:"errors"`
		FirstError string           `json:"first_error"`
		Providers  map[string]int64 `json:"providers"`
		Made       *uint64          `json:"retries_made"`
		Paused     *uint64          `json:"retries_paused_calls"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Made == nil || r.Paused == nil {
		t.Fatalf("bench --json lacks retries_made or retries_paused_calls:\n%s", out)
	}
	full := r.Errors["SERVER_THREADPOOL_EXHAUSTED"]
	t.Logf("%d calls, %d failed with a full pool, %d retries made, %d calls paused; attempts %v", r.Calls, full, *r.Made, *r.Paused, r.Providers)
	if *r.Paused == 0 || int64(*r.Paused) > full {
		t.Fatalf("retries_paused_calls %d; want 1 to the %d calls that failed SERVER_THREADPOOL_EXHAUSTED (executes=1, 8 callers)", *r.Paused, full)
	}
	if got := sum(r.Providers); got != r.Calls+int64(*r.Made) {
		t.Fatalf("providers took %d attempts; want the %d calls plus the %d retries made", got, r.Calls, *r.Made)
	}
	if !strings.Contains(r.FirstError, "retries paused") && !strings.Contains(out, "skipped ") {
		t.Fatalf("no error says its retries were paused:\n%s", out)
	}
	text := benchRun(t, nil, args...)
	line := ""
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "  retries     ") {
			line = l
		}
	}
	for _, want := range []string{" made (attempts after a call's first); ", " calls had their retries paused by the retry budget (retry.tokens=10), one count per call as /metrics' budget_refused", `"skipped N" is the N retries that call did not make`} {
		if !strings.Contains(line, want) {
			t.Errorf("summary's retries line %q lacks %q:\n%s", line, want, text)
		}
	}
	if strings.Count(text, "skipped N") != 1 {
		t.Errorf("the summary explains \"skipped N\" %d times; want once:\n%s", strings.Count(text, "skipped N"), text)
	}

	plain := benchRun(t, nil, p.url("demo.Echo"), "-n", "50", "--warmup", "0")
	if strings.Contains(plain, "retries ") {
		t.Errorf("a run without retries prints a retries line:\n%s", plain)
	}
}

// tester84 #8: bench's failure lines under --log-format json carried
// only the message: a query by provider or status found call's failures
// and not bench's. They now have the call's status, service, method and
// provider, as call's record has, with component=cli; the stalled
// provider's warning has provider= (TestF8_BenchNamesStalledProvider).
func TestBE_BenchFailureRecordsCarryTheCall(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	for _, tc := range []struct {
		args []string
		want map[string]string
	}{
		{[]string{p.url("demo.Echo"), "--method", "Fail", "--args", `"boom"`, "-n", "5", "--warmup", "0"},
			map[string]string{"status": "SERVICE_ERROR", "service": "demo.Echo", "method": "Fail", "provider": p.addr}},
		{[]string{"airnode://" + closed + "/demo.Echo", "-n", "5", "--warmup", "0"},
			map[string]string{"status": "CHANNEL_INACTIVE", "service": "demo.Echo", "method": "Echo", "provider": closed}},
	} {
		r := runCommand(t, 60*time.Second, nil, "bench", append(tc.args, "--log-format", "json")...)
		if r.code != 1 {
			t.Fatalf("bench %v: exit %d; want 1\n%s", tc.args, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
			t.Fatalf("bench %v: last stderr line is not a JSON record: %v\n%s", tc.args, err, r.stderr)
		}
		tc.want["component"], tc.want["command"], tc.want["level"] = "cli", "bench", "ERROR"
		for k, v := range tc.want {
			if rec[k] != v {
				t.Errorf("bench %v: record's %s = %v; want %q\n%s", tc.args, k, rec[k], v, lines[len(lines)-1])
			}
		}
	}
}

// tester85 #3: bench's timeout line said "URL key timeout" for a value
// from SERVICE_URL, -p, the configuration and the environment alike. It
// now names who set it, as call's warnings name a replaced value ("env
// AIRNODE_CONSUMER_TIMEOUT", "config consumer.timeout"), and --json has
// it as call_timeout_source.
func TestBE_BenchTimeoutNamesItsSource(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ref := writeConfig(t, "references:\n  - interface: demo.Echo\n    params: {methods.Echo.timeout: 750ms}\n")
	cons := writeConfig(t, "consumer:\n  timeout: 4s\n")
	for _, tc := range []struct {
		env      []string
		args     []string
		source   string
		wantText string
	}{
		{nil, []string{p.url("demo.Echo?timeout=2000")}, "SERVICE_URL", "timeout     2s per call (URL key timeout, from SERVICE_URL)"},
		{nil, []string{p.url("demo.Echo"), "-p", "timeout=2500"}, "-p", "timeout     2.5s per call (URL key timeout, from -p)"},
		{[]string{"AIRNODE_CONSUMER_TIMEOUT=3s"}, []string{p.url("demo.Echo")}, "env AIRNODE_CONSUMER_TIMEOUT", "timeout     3s per call (URL key timeout, from env AIRNODE_CONSUMER_TIMEOUT)"},
		{nil, []string{"--config", cons, p.url("demo.Echo")}, "config consumer.timeout", "timeout     4s per call (URL key timeout, from config consumer.timeout)"},
		{nil, []string{"--config", ref, p.url("demo.Echo")}, "config references[0].params", "timeout     750ms per call (URL key methods.Echo.timeout, from config references[0].params)"},
		{nil, []string{p.url("demo.Echo"), "--timeout", "1500ms"}, "--timeout", "timeout     1.5s per call (--timeout)"},
		{nil, []string{p.url("demo.Echo")}, "default", "timeout     10s per call (bench's default;"},
	} {
		args := append(tc.args, "-n", "20", "--warmup", "0")
		var got struct {
			Source *string `json:"call_timeout_source"`
		}
		out := benchRun(t, tc.env, append(args, "--json")...)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Source == nil || *got.Source != tc.source {
			t.Errorf("bench %v (env %v) --json: call_timeout_source %v; want %q", tc.args, tc.env, got.Source, tc.source)
		}
		if text := benchRun(t, tc.env, args...); !strings.Contains(text, tc.wantText) {
			t.Errorf("bench %v (env %v): summary lacks %q:\n%s", tc.args, tc.env, tc.wantText, text)
		}
	}
}

package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// -p shutdown.timeout is checked as --shutdown-timeout is (above 0, at
// least the wait: exit 2 (a usage error, fix-bs) before listening, naming the key and what is
// allowed), refused against --shutdown-timeout with another value, and
// means what the flag means: the whole budget from the signal, the wait
// included (it bounded only the drain after the wait, 1.5 s + 2 s here).
func TestHOps2_ShutdownTimeoutParam(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-p", "shutdown.timeout=abc"}, []string{`invalid value "abc" for URL key "shutdown.timeout"`, "above 0 and at least shutdown.wait (2s"}},
		{[]string{"-p", "shutdown.timeout=0"}, []string{`invalid value "0" for URL key "shutdown.timeout"`, "above 0"}},
		{[]string{"-p", "shutdown.timeout=-1s"}, []string{`invalid value "-1s" for URL key "shutdown.timeout"`}},
		// a wait given explicitly (the default one is cut to half of a shorter budget: tester75 #1)
		{[]string{"-p", "shutdown.timeout=1s", "--shutdown-wait", "2s"}, []string{`invalid value "1s" for URL key "shutdown.timeout"`, "at least shutdown.wait (2s, --shutdown-wait"}},
		{[]string{"-p", "shutdown.timeout=4s", "-p", "shutdown.wait=5s"}, []string{`URL key "shutdown.wait"`, "from 0 to shutdown.timeout (4s"}},
	} {
		expectServeRefusedCode(t, exitUsage, tc.args, tc.want...) // -p's value: a usage error (fix-bs)
	}
	// the flag and -p contradicting each other: a usage error
	expectServeRefusedCode(t, 2, []string{"-p", "shutdown.timeout=5s", "--shutdown-timeout", "3s"}, "-p shutdown.timeout=5s conflicts with --shutdown-timeout 3s")

	// The same budget given by -p (the same duration in milliseconds
	// agrees with the flag) and by the flag: a call running past it is
	// abandoned about 2 s after SIGTERM, the 1.5 s wait included.
	for _, budget := range [][]string{
		{"-p", "shutdown.timeout=2s"},
		{"--shutdown-timeout", "2s"},
		{"-p", "shutdown.timeout=2000", "--shutdown-timeout", "2s"},
	} {
		p := serve(t, "127.0.0.1:0", t.TempDir(), append([]string{"--shutdown-wait", "1.5s", "--metrics", "127.0.0.1:0"}, budget...)...)
		long := make(chan result, 1)
		go func() { long <- call(t, nil, "--timeout", "20s", p.url("demo.Echo"), "Sleep", "10000") }()
		waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 1`, 10*time.Second)
		begun := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		code := p.wait(t, 15*time.Second)
		took := time.Since(begun)
		if code != 1 || took < 1900*time.Millisecond || took > 3200*time.Millisecond {
			t.Errorf("serve %v: exit %d %v after SIGTERM; want exit 1 (a call abandoned) about 2 s after it (the wait is part of the budget; 3.5 s and more when it bounded only the drain)",
				budget, code, took.Round(time.Millisecond))
		}
		log := p.logText()
		if !strings.Contains(log, `airnode serve: shutting down" wait=1.5s timeout=2s`) || !strings.Contains(log, `shutdown timeout exceeded; calls abandoned" timeout=2s calls=1`) {
			t.Errorf("serve %v: log does not say wait=1.5s timeout=2s and that the 2s timeout was exceeded:\n%s", budget, log)
		}
		if lr := <-long; lr.code == 0 || !strings.Contains(lr.stderr, "SERVER_ERROR") {
			t.Errorf("serve %v: the Sleep 10000: exit %d, stderr %q; want SERVER_ERROR (abandoned)", budget, lr.code, lr.stderr)
		}
	}
}

// The memory registry's shutdown wait: TestHOps3_MemoryRegistrySkipsEveryWait
// (skipped whichever source gave it, -p shutdown.wait too, since H-ops3).

// A drain logs one line when the listener closes and one when the calls
// in flight are done, with their count and how long they took; nothing
// per call, and in order before "stopped".
func TestHOps2_DrainLogsDrainedCalls(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", "300ms", "--metrics", "127.0.0.1:0")
	results := make(chan result, 2)
	for range 2 {
		go func() { results <- call(t, nil, "--timeout", "20s", p.url("demo.Echo"), "Sleep", "1500") }()
	}
	waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 2`, 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	for range 2 {
		if r := <-results; r.code != 0 {
			t.Errorf("a Sleep in flight: exit %d, stderr %q", r.code, r.stderr)
		}
	}
	log := p.logText()
	closed := strings.Index(log, `msg="listener closed; draining the calls in flight"`)
	drained := strings.Index(log, `msg="drained the calls in flight"`)
	stopped := strings.Index(log, `msg="airnode serve: stopped"`)
	if closed < 0 || drained < closed || stopped < drained || strings.Count(log, "drained the calls in flight") != 1 {
		t.Fatalf("want one listener-closed line, then one drained line, then stopped:\n%s", log)
	}
	line := log[drained:]
	line = line[:strings.IndexByte(line, '\n')]
	if !strings.Contains(line, " calls=2 ") || !strings.Contains(line, " took=") {
		t.Errorf("drained line %q does not say calls=2 and took=", line)
	}
}

// registry ls --json gives the weight as a JSON number, with the weight a
// warming provider is picked with now, and a malformed weight as null
// with the problem named; the table is unchanged.
func TestHOps2_RegistryLsJSONWeightIsANumber(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "-p", "weight=300", "-p", "warmup=10m")
	code, out, errOut := airnode(t, nil, "registry", "ls", "--json", "--registry", p.reg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var raw struct {
		Services []struct {
			Providers []map[string]json.RawMessage `json:"providers"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil || len(raw.Services) != 1 || len(raw.Services[0].Providers) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	pr := raw.Services[0].Providers[0]
	if string(pr["weight"]) != "300" {
		t.Errorf("weight %s, want the number 300:\n%s", pr["weight"], out)
	}
	var eff int64
	if err := json.Unmarshal(pr["effective_weight"], &eff); err != nil || eff < 1 || eff > 30 {
		t.Errorf("effective_weight %s: want a number from 1 to 30 (300 a few seconds into a 10m warm-up): %v", pr["effective_weight"], err)
	}
	if w := string(pr["warmup"]); !strings.Contains(w, "of 300") || !strings.Contains(w, "left") {
		t.Errorf("warmup %s, want the table's text", w)
	}
	if _, ok := pr["problem"]; ok {
		t.Errorf("problem given for a good weight:\n%s", out)
	}
	// the same as numbers, for scripts (tester41): seconds since the
	// provider's start, seconds of warm-up left, the start itself
	var upSec, leftSec float64
	var started string
	if err := json.Unmarshal(pr["uptime_s"], &upSec); err != nil || upSec < 0 || upSec > 60 {
		t.Errorf("uptime_s %s: want seconds since serve started (0..60): %v", pr["uptime_s"], err)
	}
	if err := json.Unmarshal(pr["warmup_left_s"], &leftSec); err != nil || leftSec < 540 || leftSec > 600 {
		t.Errorf("warmup_left_s %s: want 540..600 of a 10m warm-up: %v", pr["warmup_left_s"], err)
	}
	if err := json.Unmarshal(pr["started"], &started); err != nil {
		t.Errorf("started %s: %v", pr["started"], err)
	} else if at, err := time.Parse(time.RFC3339Nano, started); err != nil || time.Since(at) > time.Minute || time.Since(at) < 0 {
		t.Errorf("started %q: want an RFC 3339 time within the last minute: %v", started, err)
	}
	code, out, _ = airnode(t, nil, "registry", "ls", "--registry", p.reg)
	if code != 0 || !strings.Contains(out, "300") || !strings.Contains(out, "weight ") {
		t.Errorf("table: exit %d\n%s", code, out)
	}

	// an entry written by hand with a malformed weight
	bad := t.TempDir()
	if err := fileRegistry(t, bad).Register(context.Background(), spi.MustParse("airnode://127.0.0.1:38001/demo.Echo?side=provider&weight=abc")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = airnode(t, nil, "registry", "ls", "--json", "--registry", "file://"+bad)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw.Services = nil // decode afresh: json merges into the maps already there
	if err := json.Unmarshal([]byte(out), &raw); err != nil || len(raw.Services) != 1 || len(raw.Services[0].Providers) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	pr = raw.Services[0].Providers[0]
	if string(pr["weight"]) != "null" || string(pr["effective_weight"]) != "null" || !strings.Contains(string(pr["problem"]), `\"abc\"`) {
		t.Errorf("malformed weight: want weight and effective_weight null and the problem naming \"abc\":\n%s", out)
	}
	if string(pr["uptime_s"]) != "null" || string(pr["warmup_left_s"]) != "null" || pr["started"] != nil {
		t.Errorf("an entry with no timestamp: want uptime_s and warmup_left_s null and no started:\n%s", out)
	}

	// warmup=0: nothing left to warm up, from the start
	p0 := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	code, out, errOut = airnode(t, nil, "registry", "ls", "--json", "--registry", p0.reg)
	raw.Services = nil
	if code != 0 || json.Unmarshal([]byte(out), &raw) != nil || len(raw.Services) != 1 || len(raw.Services[0].Providers) != 1 {
		t.Fatalf("exit %d %s:\n%s", code, errOut, out)
	}
	if pr = raw.Services[0].Providers[0]; string(pr["warmup_left_s"]) != "0" || string(pr["warmup"]) != `"off"` {
		t.Errorf("warmup=0: want warmup_left_s 0 and warmup \"off\":\n%s", out)
	}
}

// expectServeRefused runs serve with args (a file registry of its own,
// port 0) and fails t unless it exits 1 before listening, registering
// nothing, with every one of want in its stderr.
func expectServeRefused(t *testing.T, args []string, want ...string) {
	t.Helper()
	expectServeRefusedCode(t, 1, args, want...)
}

// expectServeRefusedCode is expectServeRefused for exit status code: 2
// for a usage error, such as a -p key that contradicts a flag.
func expectServeRefusedCode(t *testing.T, code int, args []string, want ...string) {
	t.Helper()
	dir := t.TempDir()
	full := append([]string{"--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)
	r := runCommand(t, 10*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", full...)
	if r.code != code {
		t.Fatalf("serve %v: exit %d, stderr %q; want exit %d", args, r.code, r.stderr, code)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("serve %v: stderr %q; want it to say %q", args, r.stderr, w)
		}
	}
	if strings.Contains(r.stderr, "msg=listening") {
		t.Errorf("serve %v listened before refusing:\n%s", args, r.stderr)
	}
	if es := providerEntries(t, dir, "demo.Echo"); len(es) > 0 {
		t.Errorf("serve %v registered %v", args, es)
	}
}

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jsonRecords parses every line of stderr as a JSON record, failing the
// test on a line that is not one.
func jsonRecords(t *testing.T, what, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: stderr line %q is not JSON: %v\n%s", what, l, err, stderr)
		}
		out = append(out, m)
	}
	return out
}

// hasRecord reports whether recs holds a record of level whose msg is msg.
func hasRecord(recs []map[string]any, level, msg string) bool {
	for _, r := range recs {
		if r["level"] == level && r["msg"] == msg {
			return true
		}
	}
	return false
}

// Fresh users (cli2 #1): under --log-format json, bench's warnings, its
// "-c is more than -n" and "interrupted" lines, the "--registry not used"
// notice, list --explain's warnings and registry watch's "watching" line
// were plain text. Each is now a JSON record with the text's wording (less
// "airnode: " and "warning: "); under text each line is as it was.
func TestCli2_JSONLogFormatOwnLines(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	idle := exec.Command("sleep", "60") // a process that uses no CPU: --server-pid warns
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idle.Process.Kill(); _ = idle.Wait() })
	pid := strconv.Itoa(idle.Process.Pid)
	reg := "file://" + dir
	args := []string{p.url("demo.Echo"), "-n", "3", "-c", "5", "--warmup", "0", "--server-pid", pid, "--registry", reg}
	notUsed := "bench: --registry " + reg + " not used: " + p.url("demo.Echo") + " names its provider (a direct call)"
	moreC := "bench: -c 5 is more than -n 3: running 3 callers"
	noCPU := "bench: --server-pid " + pid + " used no CPU time during the measured phase: is it the provider? Server CPU not reported"

	r := runCommand(t, 60*time.Second, nil, "bench", append(args, "--log-format", "json")...)
	recs := jsonRecords(t, "bench", r.stderr)
	if r.code != 0 || !hasRecord(recs, "WARN", notUsed) || !hasRecord(recs, "WARN", moreC) || !hasRecord(recs, "WARN", noCPU) {
		t.Errorf("bench --log-format json: exit %d, want WARN records %q, %q, %q:\n%s", r.code, notUsed, moreC, noCPU, r.stderr)
	}
	r = runCommand(t, 60*time.Second, nil, "bench", args...)
	for _, want := range []string{notUsed, moreC, noCPU} {
		want = "airnode: bench: warning: " + strings.TrimPrefix(want, "bench: ") + "\n"
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("bench, text: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}

	// call's "--registry not used" goes through the same line
	r = call(t, nil, "--log-format", "json", "--registry", reg, p.url("demo.Echo"), "Echo", `"x"`)
	recs = jsonRecords(t, "call", r.stderr)
	if want := "call: --registry " + reg + " not used: " + p.url("demo.Echo") + " names its provider (a direct call)"; r.code != 0 || !hasRecord(recs, "WARN", want) {
		t.Errorf("call --log-format json: exit %d, want WARN %q:\n%s", r.code, want, r.stderr)
	}

	// list --explain's warnings
	url := p.url("demo.Echo") + "?foo=1"
	foo := "foo=1 is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling)"
	r = runCommand(t, 20*time.Second, nil, "list", "--log-format", "json", "--explain", url)
	if recs = jsonRecords(t, "list --explain", r.stderr); r.code != 0 || !hasRecord(recs, "WARN", "list: "+foo) {
		t.Errorf("list --explain --log-format json: exit %d, want WARN %q:\n%s", r.code, foo, r.stderr)
	}
	r = runCommand(t, 20*time.Second, nil, "list", "--explain", url)
	if r.code != 0 || r.stderr != "airnode: list: warning: "+foo+"\n" {
		t.Errorf("list --explain, text: exit %d, stderr %q", r.code, r.stderr)
	}

	// registry watch's first line
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := exec.CommandContext(ctx, binary, "registry", "watch", "demo.Echo", "--registry", reg, "--log-format", "json")
	errPipe, err := w.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errPipe)
	first := ""
	if sc.Scan() {
		first = sc.Text()
	}
	_ = w.Process.Kill()
	_ = w.Wait()
	if recs := jsonRecords(t, "registry watch", first); !hasRecord(recs, "INFO", "watching demo.Echo in "+reg+" (Ctrl-C to stop)") {
		t.Errorf("registry watch --log-format json: first line %q", first)
	}
}

// bench's "interrupted" line is a record of level ERROR under
// --log-format json (cli2 #1), the same words as the text line.
func TestCli2_BenchInterruptedLineIsJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, addr := exportSlowEcho(t, ctx)
	r := interruptBench(t, addr, svc, "--duration", "30s", "--log-format", "json")
	recs := jsonRecords(t, "bench", r.stderr)
	last := recs[len(recs)-1]
	msg, _ := last["msg"].(string)
	if r.code != 130 || last["level"] != "ERROR" || !strings.HasPrefix(msg, "bench: interrupted by SIGINT after ") || !strings.HasSuffix(msg, " of the planned 30s") {
		t.Errorf("exit %d, stderr %q; want 130 and an ERROR record \"bench: interrupted by SIGINT after ... of the planned 30s\"", r.code, r.stderr)
	}
}

// Fresh users (cli2 #2): list --explain did not warn of a consumer's
// weight, which Refer warns of (weight is a provider key), and showed a
// heartbeat key the chosen strategy ignores (heartbeat.retries beside
// heartbeat=dual) as an ordinary row, which Refer warns of as ignored.
// Now explain warns of both in Refer's words (one source in the kernel)
// and marks the heartbeat key's row as not used.
func TestCli2_ExplainWarnsAsReferOfWeightAndIgnoredHeartbeatKeys(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	url := p.url("demo.Echo") + "?weight=50&heartbeat=dual&heartbeat.retries=5"

	// Refer's warnings, from a real call
	r := call(t, nil, url, "Echo", `"x"`)
	const referWeight = `msg="provider key on a reference has no effect: `
	i := strings.Index(r.stderr, referWeight)
	if r.code != 0 || i < 0 || !strings.Contains(r.stderr, "key=heartbeat.retries heartbeat=dual read_by=idle") {
		t.Fatalf("call: exit %d, want Refer's warnings of weight and heartbeat.retries:\n%s", r.code, r.stderr)
	}
	why, _, _ := strings.Cut(r.stderr[i+len(referWeight):], `"`)

	code, stdout, stderr := runBin(t, "", "list", "--explain", url)
	wantWarns := []string{
		"airnode: list: warning: weight=50 is a provider key and has no effect on a reference: " + why + "\n",
		"airnode: list: warning: heartbeat.retries=5 has no effect: heartbeat dual does not read it; idle does\n",
	}
	for _, w := range wantWarns {
		if code != 0 || !strings.Contains(stderr, w) {
			t.Errorf("list --explain: exit %d, stderr lacks %q:\n%s", code, w, stderr)
		}
	}
	mark := explainRows(t, stdout, "heartbeat.retries")
	if want := []string{"heartbeat.retries service 5 SERVICE_URL query (heartbeat.retries)", "service (heartbeat.retries=5 is not used: heartbeat dual does not read it; idle does)"}; strings.Join(mark, "\n") != strings.Join(want, "\n") {
		t.Errorf("heartbeat.retries rows %q, want %q:\n%s", mark, want, stdout)
	}
	// idle reads it: no mark, no warning
	code, stdout, stderr = runBin(t, "", "list", "--explain", p.url("demo.Echo")+"?heartbeat.retries=5")
	if rows := explainRows(t, stdout, "heartbeat.retries"); code != 0 || len(rows) != 1 || strings.Contains(stderr, "heartbeat.retries") {
		t.Errorf("heartbeat idle: exit %d, rows %q, stderr %q", code, rows, stderr)
	}
}

// explainRows returns the KEYS row of key in list --explain's out and the
// continuation rows under it (their KEYS cell empty), each with its
// cells joined by one space.
func explainRows(t *testing.T, out, key string) []string {
	t.Helper()
	var rows []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, key+" ") && !in && len(rows) == 0:
			in = true
		case in && strings.HasPrefix(l, " "):
		default:
			in = false
		}
		if in {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
	}
	return rows
}

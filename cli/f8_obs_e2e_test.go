package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// A failed call's error line names the provider that failed it and the
// call, once: a token refusal's message names only the consumer's address
// (tester53 finding 5). The JSON record has them as fields.
func TestF8_CallErrorNamesProvider(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "token=s3cret")
	u := p.url("demo.Echo") + "?token=wrong"

	r := call(t, nil, u, "Echo", `"x"`)
	expectFail(t, r, "BAD_REQUEST: token: wrong token for demo.Echo.Echo from 127.0.0.1:", "(provider "+p.addr+")")
	if n := strings.Count(r.stderr, p.addr); n != 1 || strings.Contains(r.stderr, "call demo.Echo.Echo") {
		t.Errorf("stderr %q: want the provider named once, and no call the message names already", r.stderr)
	}

	r = call(t, nil, "--log-format", "json", u, "Echo", `"x"`)
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.stderr), &rec); err != nil || r.code != 1 {
		t.Fatalf("exit %d, stderr %q: %v", r.code, r.stderr, err)
	}
	if rec["provider"] != p.addr || rec["service"] != "demo.Echo" || rec["method"] != "Echo" || rec["status"] != "BAD_REQUEST" ||
		strings.Contains(rec["msg"].(string), "(provider") {
		t.Errorf("record %v: want provider %s, service demo.Echo, method Echo, and the message as the provider wrote it", rec, p.addr)
	}

	// a provider's own failure names neither: both are added
	r = call(t, nil, p.url("demo.Echo")+"?token=s3cret", "Fail", `"boom"`)
	expectFail(t, r, "SERVICE_ERROR: boom (call demo.Echo.Fail, provider "+p.addr+")")

	// no provider reached: the consumer's message names the address it
	// could not reach; nothing is added twice
	dead := testaddr.Reserved(t)
	r = call(t, nil, "airnode://"+dead+"/demo.Echo", "Echo", "1")
	expectFail(t, r, "CHANNEL_INACTIVE: ")
	if strings.Contains(r.stderr, "(provider") || strings.Contains(r.stderr, "(call ") {
		t.Errorf("stderr %q: the message names the provider and the call already", r.stderr)
	}

	// bench's first error names the provider that refused
	br := runCommand(t, 60*time.Second, nil, "bench", u, "-n", "20", "-c", "1", "--warmup", "0", "--json")
	out := br.stdout
	var rep struct {
		Errors     map[string]int64 `json:"errors"`
		FirstError string           `json:"first_error"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if br.code != 1 || rep.Errors["BAD_REQUEST"] != 20 || !strings.HasSuffix(rep.FirstError, "(provider "+p.addr+")") {
		t.Errorf("bench: errors %v, first error %q: want 20 BAD_REQUEST naming provider %s", rep.Errors, rep.FirstError, p.addr)
	}
}

// bench makes no call it does not report: it waits for the providers'
// first connections instead of probing them, so a provider counts
// exactly bench's calls (tester53 finding 8: always one more).
func TestF8_BenchCountsEveryCallItMakes(t *testing.T) {
	dir := t.TempDir()
	access := filepath.Join(dir, "access.log")
	p := serve(t, "127.0.0.1:0", dir, "-p", "accesslog="+access)
	for _, warmup := range []string{"0", "7"} {
		before := lines(t, access)
		out := benchRun(t, []string{"XDG_RUNTIME_DIR=" + dir}, "--registry", p.reg, "demo.Echo", "-n", "40", "-c", "2", "--warmup", warmup, "--json")
		var rep struct {
			Calls     int64            `json:"calls"`
			Providers map[string]int64 `json:"providers"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		want := int64(40)
		if warmup == "7" {
			want += 7 // the warm-up's calls reach the provider too
		}
		got := waitLines(t, access, before+int(want))
		if rep.Calls != 40 || rep.Providers[p.addr] != 40 || got-before != int(want) {
			t.Errorf("--warmup %s: bench %d calls, attempts %v; the provider logged %d calls; want 40, 40 and %d", warmup, rep.Calls, rep.Providers, got-before, want)
		}
	}
}

// lines returns the number of lines of path (0 when it does not exist).
func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// waitLines waits up to 2 s for path to have at least n lines (a
// provider's access line is written as it answers, the consumer may have
// exited first) and then 200 ms more for any extra one; it returns the
// count.
func waitLines(t *testing.T, path string, n int) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for lines(t, path) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	return lines(t, path)
}

// The consumer's and the provider's access lines of one call carry the
// same request id, and the consumer's "local" is the provider's "consumer"
// (tester53 finding 6: the lines could be paired only by time); the
// provider's "local" is its own address. Both appended after the fields
// the line had.
func TestF8_AccessLogPairsConsumerAndProvider(t *testing.T) {
	dir := t.TempDir()
	access := filepath.Join(dir, "access.log")
	p := serve(t, "127.0.0.1:0", dir, "-p", "accesslog="+access)
	r := call(t, nil, "-p", "accesslog=true", p.url("demo.Echo"), "Echo", `"hi"`)
	expectOK(t, r, `"hi"`)
	cons := accessFields(t, r.stderr)
	waitLines(t, access, 1)
	b, err := os.ReadFile(access)
	if err != nil {
		t.Fatal(err)
	}
	prov := accessFields(t, string(b))
	id := cons["request_id"]
	if id == "" || id == "0" || prov["request_id"] != id || cons["local"] == "" || prov["consumer"] != cons["local"] ||
		prov["local"] != p.addr || cons["provider"] != p.addr {
		t.Errorf("consumer %v\nprovider %v\nwant the same request_id, consumer local = provider remote, provider local = %s", cons, prov, p.addr)
	}
	// appended: the fields that were there keep their order, and the
	// new ones come last
	for _, l := range []string{r.stderr, string(b)} {
		if !regexp.MustCompile(`duration_ms=\S+ request_id=\d+ local=127\.0\.0\.1:\d+\n`).MatchString(l) {
			t.Errorf("line %q: want request_id and local appended after duration_ms", l)
		}
	}
}

// accessFields returns the key=value fields of the last "msg=access" line
// of text.
func accessFields(t *testing.T, text string) map[string]string {
	t.Helper()
	var m map[string]string
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, " msg=access ") {
			continue
		}
		m = map[string]string{}
		for _, kv := range strings.Fields(l) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
	}
	if m == nil {
		t.Fatalf("no access line in %q", text)
	}
	return m
}

// A provider that stops answering is named while the run goes on: with
// every caller waiting on it, the timeline shows a second of 0 calls and
// no provider (tester53 finding 3).
func TestF8_BenchNamesStalledProvider(t *testing.T) {
	dir := t.TempDir()
	a := serve(t, "127.0.0.1:0", dir)
	b := serve(t, "127.0.0.1:0", dir)
	cmd, out, errb := benchStart(t, "airnode://"+a.addr+","+b.addr+"/demo.Echo", "--duration", "6s", "-c", "4", "--warmup", "0", "--json")
	time.Sleep(1500 * time.Millisecond)
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// 3.5 s: a stall is a silence of 4 × the longest call so far, at
	// least 2 s (stallBound; tester74)
	time.Sleep(3500 * time.Millisecond)
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, out.String(), errb.String())
	}
	want := "airnode: bench: warning: provider " + b.addr + " finished none of the "
	if !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "provider "+a.addr+" finished none") {
		t.Errorf("stderr %q: want a warning naming %s, the stopped one, only", errb.String(), b.addr)
	}
	// the record names it as every consumer-side record names its peer
	// (tester84 #8): provider=HOST:PORT, with the call's service and method
	if attrs := " provider=" + b.addr + " service=demo.Echo method=Echo"; !strings.Contains(errb.String(), attrs) {
		t.Errorf("stderr %q: the stall warning lacks %q", errb.String(), attrs)
	}
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
)

// rssKiB returns the resident set size of process pid in KiB (Linux).
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// Tester's bug 5: Payload 1073741824 is refused with BAD_REQUEST naming
// the provider's payload limit, before the provider allocates it.
func TestE2E_HugePayloadRefusedBeforeAllocating(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Payload", "1073741824"), "BAD_REQUEST", "8 MiB")
	if rss := rssKiB(t, p.cmd.Process.Pid); rss > 256<<10 {
		t.Fatalf("provider resident set %d KiB after the refused call, want well under 1 GiB", rss)
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
	// The largest Payload it accepts fits the response body limit (new-user
	// finding: Payload 8388608 was accepted, then the 8388614-byte
	// response refused as BAD_RESPONSE after the work was done).
	max := strconv.Itoa(8<<20 - demo.ResponseFraming)
	// --timeout 15s: making, sending and printing 8 MiB may take more than
	// the default 1s on a loaded machine; this is about the size limit
	if r := call(t, nil, "--timeout", "15s", p.url("demo.Echo"), "Payload", max); r.code != 0 {
		t.Fatalf("Payload %s: exit %d: %s", max, r.code, r.stderr)
	}
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Payload", strconv.Itoa(8<<20-demo.ResponseFraming+1)), "BAD_REQUEST", "less 16 bytes of response framing")
}

// serveFails runs `airnode serve` with args, which must exit non-zero
// before serving; it returns the combined output.
func serveFails(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)...)
	cmd.Env = append(hostEnviron(), "XDG_RUNTIME_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("serve %v: %v (want a non-zero exit at startup)\n%s", args, err, out)
	}
	if strings.Contains(string(out), "serving") {
		t.Fatalf("serve %v served before failing:\n%s", args, out)
	}
	return string(out)
}

// Tester's bugs 3 and 7: -p values no consumer could use, and the keys
// the provider sets itself, stop serve at startup with an error naming
// them, instead of registering an unusable provider or silently replacing
// the value.
func TestE2E_ServeRejectsBadParams(t *testing.T) {
	for _, tc := range []struct{ param, want string }{
		{"timeout=abc", "abc"},
		{"codec=bogus", "bogus"},
		{"connections=999", "connections"},
		{"timestamp=1", "set by the provider"},
		{"side=consumer", "set by the provider"},
		{"methods=Echo", "set by the provider"},
		{"pid=1", "set by the provider"},
	} {
		out := serveFails(t, "-p", tc.param)
		key, _, _ := strings.Cut(tc.param, "=")
		if !strings.Contains(out, tc.want) || !strings.Contains(out, key) {
			t.Errorf("serve -p %s: output does not name %q and %q:\n%s", tc.param, key, tc.want, out)
		}
	}
}

// Tester's bug 6: SIGINT with a call that outlasts --shutdown-timeout:
// serve says how many calls it abandoned and exits 1; the consumer is told
// that the provider shut down.
func TestE2E_ShutdownTimeoutAbandonsCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-timeout", "2s", "--shutdown-wait", "500ms", "--metrics", "127.0.0.1:0")
	got := make(chan result, 1)
	go func() { got <- call(t, nil, p.url("demo.Echo"), "Sleep", "6000", "--timeout", "10s") }()
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	waitFor(t, "the Sleep call in flight on the provider", func() bool {
		resp, err := client.Get("http://" + m[1] + "/stats")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st struct {
			Methods []struct {
				Side, Method string
				InFlight     int `json:"in_flight"`
			} `json:"methods"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return false
		}
		for _, ms := range st.Methods {
			if ms.Side == "provider" && ms.Method == "Sleep" && ms.InFlight == 1 {
				return true
			}
		}
		return false
	})
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 1 {
		t.Fatalf("serve exited %d, want 1\n%s", code, p.logText())
	}
	if !strings.Contains(p.logText(), `msg="airnode serve: shutdown timeout exceeded; calls abandoned" timeout=2s calls=1 abandoned="demo.Echo.Sleep from `) {
		t.Fatalf("serve's stderr does not say what was abandoned:\n%s", p.logText())
	}
	r := <-got
	expectFail(t, r, "SERVER_ERROR", "shut down", "abandoned")
}

// Tester's bug 1: a registry lists a healthy provider and a hung one
// (kill -STOP): every `airnode call` goes to the healthy one, none waits
// on the hung one past its timeout.
func TestE2E_HungProviderDoesNotFailCalls(t *testing.T) {
	dir := t.TempDir()
	healthy := serve(t, "127.0.0.1:0", dir)
	serveStopped(t, dir) // listed, hung
	want := fmt.Sprintf(`"pid":%d`, healthy.cmd.Process.Pid)
	for i := range 8 {
		r := call(t, nil, "--registry", healthy.reg, "demo.Echo", "Info")
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("call %d: exit %d after %v, stdout %q, stderr %q; want the healthy provider's Info", i, r.code, r.elapsed, r.stdout, r.stderr)
		}
	}
}

// A -p key that a dedicated flag also sets, with another value, is refused
// naming both (serve, call and bench alike); the same value both ways is
// accepted.
func TestE2E_ParamConflictingWithFlagRefused(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"-p", "transport=tcp", "--transport", "smux"}},
		{[]string{"-p", "tls=false", "--tls-cert", "c.pem", "--tls-key", "k.pem"}},
		{[]string{"--tls-ca", "ca.pem", "-p", "tls.ca=other.pem"}},
	} {
		out := serveFails(t, tc.args...)
		if !regexp.MustCompile(`airnode: serve: -p \S+ conflicts with --(transport smux|tls-cert c\.pem|tls-ca ca\.pem) \(which sets \S+\): give one of them`).MatchString(out) {
			t.Errorf("serve %v:\n%s\nwant the -p key and the flag named", tc.args, out)
		}
	}
	r := call(t, nil, "airnode://127.0.0.1:1/demo.Echo", "Echo", "1", "-p", "timeout=1s", "--timeout", "2s")
	expectExit(t, r, 2, "airnode: call: -p timeout=1s conflicts with --timeout 2s (which sets timeout=2s)")
	b := benchResult(t, "airnode://127.0.0.1:1/demo.Echo", "-p", "codec=json", "--codec", "msgpack")
	if b.code != 2 || !strings.HasPrefix(b.stderr, "airnode: bench: -p codec=json conflicts with --codec msgpack (which sets codec=msgpack)") {
		t.Errorf("bench -p codec=json --codec msgpack: exit %d, stderr %q", b.code, b.stderr)
	}

	// agreeing values are accepted, and bench takes connections from -p or
	// the URL when --connections is not given
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp", "-p", "transport=tcp")
	for args, want := range map[[4]string]string{
		{p.url("demo.Echo"), "-p", "connections=3", "--codec=msgpack"}:                    "3 connection(s)",
		{p.url("demo.Echo") + "?connections=2", "-p", "codec=msgpack", "--codec=msgpack"}: "2 connection(s)",
		{p.url("demo.Echo") + "?connections=4", "--connections", "4", "--codec=msgpack"}:  "4 connection(s)",
	} {
		if out := benchRun(t, nil, append(args[:], "-n", "20", "-p", "transport=tcp")...); !strings.Contains(out, want) {
			t.Errorf("bench %v: %s, want %q", args, out, want)
		}
	}
}

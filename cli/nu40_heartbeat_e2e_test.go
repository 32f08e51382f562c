package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nu40 findings 3 and 8, with the real binary: one wording of each
// heartbeat bound whether the value comes from call's URL, serve's -p or
// plugins.yaml (no "3000 (milliseconds)" suggested where plugins.yaml
// refuses it), heartbeat=IDLE gets a did-you-mean, heartbeat=0 names the
// key written, and heartbeat=3000 with a different heartbeat.interval is
// one setting given twice.
func TestE2E_HeartbeatMessages(t *testing.T) {
	const url = "airnode://127.0.0.1:1/demo.Echo?"
	for _, tc := range []struct{ param, want string }{
		{"heartbeat.interval=0", `invalid value "0" for URL key "heartbeat.interval": want a duration from 10ms to 24h`},
		{"heartbeat.interval=5ms", `invalid value "5ms" for URL key "heartbeat.interval": want a duration from 10ms to 24h`},
		{"heartbeat.interval=25h", `invalid value "25h" for URL key "heartbeat.interval": want a duration from 10ms to 24h`},
		{"heartbeat.interval=-1s", `invalid value "-1s" for URL key "heartbeat.interval": want a positive duration such as 1.5s, 200ms or 3000 (milliseconds), not a negative one`},
		{"heartbeat.retries=0", `invalid value "0" for URL key "heartbeat.retries": want an integer from 1 to 1000`},
		{"heartbeat.retries=abc", `invalid value "abc" for URL key "heartbeat.retries": want an integer from 1 to 1000`},
		// tester90 #2: Dubbo's "off" values say how to turn it off here
		{"heartbeat=0", `invalid value "0" for URL key "heartbeat": want a duration from 10ms to 24h; in Dubbo 0 (or a negative number) turns the heartbeat off: here use heartbeat=none`},
		{"heartbeat=-1", `unknown heartbeat "-1" (available: dual, idle, none); in Dubbo a negative number (or 0) turns the heartbeat off: here use heartbeat=none`},
		{"heartbeat=IDLE", `unknown heartbeat "IDLE" (available: dual, idle, none); did you mean "idle"?`},
		{"heartbeat=Dual", `did you mean "dual"?`},
	} {
		code, _, stderr := runBin(t, "", "call", url+tc.param, "Echo", "1")
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("call ?%s: exit %d, want an error with %q:\n%s", tc.param, code, tc.want, stderr)
		}
		if out := serveFails(t, "-p", tc.param); !strings.Contains(out, tc.want) {
			t.Errorf("serve -p %s: want an error with %q:\n%s", tc.param, tc.want, out)
		}
	}
	const twice = `heartbeat=3000 (Dubbo's bare interval, 3s) and heartbeat.interval=5s give the heartbeat interval twice with different values: give one`
	if code, _, stderr := runBin(t, "", "call", url+"heartbeat=3000&heartbeat.interval=5s", "Echo", "1"); code == 0 || !strings.Contains(stderr, twice) {
		t.Errorf("call heartbeat=3000&heartbeat.interval=5s: exit %d, want %q:\n%s", code, twice, stderr)
	}
	if code, stdout, stderr := runBin(t, "", "list", "--explain", url+"heartbeat=3000&heartbeat.interval=5s"); code != exitUsage || !strings.Contains(stderr, "--explain URL key heartbeat=3000, --explain URL key heartbeat.interval=5s: service demo.Echo: heartbeat idle: "+twice) {
		// the command line's keys: a usage error naming where (fix-cj)
		t.Errorf("list --explain heartbeat=3000&heartbeat.interval=5s: exit %d, want 2 and %q:\n%s%s", code, twice, stdout, stderr)
	}
	// the same value both ways is one setting given twice alike
	if code, stdout, stderr := runBin(t, "", "list", "--explain", url+"heartbeat=3000&heartbeat.interval=3s"); code != 0 {
		t.Errorf("list --explain heartbeat=3000&heartbeat.interval=3s: exit %d:\n%s%s", code, stdout, stderr)
	}
	// list --explain shows the interval the bare form sets, not the default
	code, stdout, stderr := runBin(t, "", "list", "--explain", url+"heartbeat=3000")
	row := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "heartbeat.interval ") {
			row = strings.Join(strings.Fields(l), " ")
			break
		}
	}
	if code != 0 || row != "heartbeat.interval service 3s (written 3000) SERVICE_URL query (heartbeat) (bare number: the interval in ms)" {
		t.Errorf("list --explain heartbeat=3000: exit %d, heartbeat.interval row %q:\n%s%s", code, row, stdout, stderr)
	}
	// plugins.yaml: the same bounds, and no bare milliseconds suggested
	for _, tc := range []struct{ key, value, want string }{
		{"heartbeat.interval", "0s", "want a duration from 10ms to 24h"},
		{"heartbeat.interval", "-1s", "want a positive duration such as 1.5s or 200ms, not a negative one"},
		{"heartbeat.retries", "0", "want an integer from 1 to 1000"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte("protocol:\n  "+tc.key+": \""+tc.value+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runBin(t, dir, "serve", "--listen", "127.0.0.1:0", "--registry", "file://"+dir)
		out := stdout + stderr
		if code == 0 || !strings.Contains(out, tc.want) || strings.Contains(out, "(milliseconds)") {
			t.Errorf("plugins.yaml %s: %s: exit %d, want %q and no bare milliseconds:\n%s", tc.key, tc.value, code, tc.want, out)
		}
	}
	// list kernel and list heartbeat state the same bounds
	_, kernelOut, _ := runBin(t, "", "list", "kernel")
	_, hbOut, _ := runBin(t, "", "list", "heartbeat")
	for name, out := range map[string]string{"list kernel": kernelOut, "list heartbeat": hbOut} {
		for _, want := range []string{"from 10ms to 24h", "from 1 to 1000"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not say %q:\n%s", name, want, out)
			}
		}
	}
}

package cli

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester33 F14: when serve's shutdown timeout abandons a call, its last
// line is a log line (msg=, key=value) naming the call's service.method
// and consumer address and the count, serve still exits 1, and the
// consumer's SERVER_ERROR gives the method's own error as plain text,
// without a second status name. With plugins too (tester nu77 #7): they
// are stopped before that line, whose "plugin process exited" lines came
// after it.
func TestOps4AbandonedCallLineIsStructured(t *testing.T) {
	for _, plugins := range []bool{false, true} {
		t.Run("plugins="+strconv.FormatBool(plugins), func(t *testing.T) {
			args := []string{"--shutdown-wait", "0", "--shutdown-timeout", "1s", "--metrics", "127.0.0.1:0"}
			if plugins {
				args = append(args, "--config", writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, command: "+plug3aPlugin(t)+"}\n"))
			}
			p := serve(t, "127.0.0.1:0", t.TempDir(), args...)
			long := make(chan result, 1)
			go func() { long <- call(t, nil, "--timeout", "20s", p.url("demo.Echo"), "Sleep", "10000") }()
			waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 1`, 10*time.Second)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 15*time.Second); code != 1 {
				t.Errorf("serve exited %d, want 1 (a call abandoned)", code)
			}
			lines := strings.Split(strings.TrimSpace(p.logText()), "\n")
			last := lines[len(lines)-1]
			want := regexp.MustCompile(`level=ERROR msg="airnode serve: shutdown timeout exceeded; calls abandoned" timeout=1s calls=1 abandoned="demo\.Echo\.Sleep from 127\.0\.0\.1:\d+" answered=SERVER_ERROR component=cli command=serve$`)
			if !want.MatchString(last) {
				t.Errorf("serve's last line:\n%s\nwant it to match %s", last, want)
			}
			if plugins && !strings.Contains(p.logText(), `msg="plugin process exited" component="plugin host" plugin=acme.plug3a`) {
				t.Errorf("the plugin's exit is not logged:\n%s", p.logText())
			}
			if strings.Contains(p.logText(), "airnode: serve: shutdown timeout") {
				t.Errorf("serve also printed the plain-text line:\n%s", p.logText())
			}
			lr := <-long
			if lr.code == 0 || !strings.Contains(lr.stderr, "SERVER_ERROR") || !strings.Contains(lr.stderr, "the call was abandoned (the method returned: context canceled)") ||
				strings.Contains(lr.stderr, "SERVICE_ERROR") {
				t.Errorf("the abandoned call: exit %d, stderr %q; want SERVER_ERROR with the method's error as plain text, no SERVICE_ERROR", lr.code, lr.stderr)
			}
		})
	}
}

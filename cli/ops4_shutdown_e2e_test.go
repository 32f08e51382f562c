package cli

import (
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester33 F14: when serve's shutdown timeout abandons a call, its last
// line is a log line (msg=, key=value) naming the call's service.method
// and consumer address and the count, serve still exits 1, and the
// consumer's SERVER_ERROR gives the method's own error as plain text,
// without a second status name.
func TestOps4AbandonedCallLineIsStructured(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", "0", "--shutdown-timeout", "1s", "--metrics", "127.0.0.1:0")
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
	want := regexp.MustCompile(`level=ERROR msg="airnode serve: shutdown timeout exceeded; calls abandoned" timeout=1s calls=1 abandoned="demo\.Echo\.Sleep from 127\.0\.0\.1:\d+" answered=SERVER_ERROR$`)
	if !want.MatchString(last) {
		t.Errorf("serve's last line:\n%s\nwant it to match %s", last, want)
	}
	if strings.Contains(p.logText(), "airnode: serve: shutdown timeout") {
		t.Errorf("serve also printed the plain-text line:\n%s", p.logText())
	}
	lr := <-long
	if lr.code == 0 || !strings.Contains(lr.stderr, "SERVER_ERROR") || !strings.Contains(lr.stderr, "the call was abandoned (the method returned: context canceled)") ||
		strings.Contains(lr.stderr, "SERVICE_ERROR") {
		t.Errorf("the abandoned call: exit %d, stderr %q; want SERVER_ERROR with the method's error as plain text, no SERVICE_ERROR", lr.code, lr.stderr)
	}
}

// tester nu77 #7: with plugins, the abandoned-calls line is still serve's
// last: the plugins are stopped before it is logged (their "plugin
// process exited" lines came after it).
func TestOps4AbandonedCallLineIsLastWithPlugins(t *testing.T) {
	cfg := writeConfig(t, "plugins:\n  - {name: acme.plug3a, point: filter, command: "+plug3aPlugin(t)+"}\n")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--config", cfg, "--shutdown-wait", "0", "--shutdown-timeout", "1s", "--metrics", "127.0.0.1:0")
	long := make(chan result, 1)
	go func() { long <- call(t, nil, "--timeout", "20s", p.url("demo.Echo"), "Sleep", "10000") }()
	waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 1`, 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 1 {
		t.Errorf("serve exited %d, want 1 (a call abandoned)", code)
	}
	text := p.logText()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `level=ERROR msg="airnode serve: shutdown timeout exceeded; calls abandoned"`) {
		t.Errorf("serve's last line:\n%s\nwant the abandoned-calls line; the log:\n%s", last, text)
	}
	if !strings.Contains(text, `msg="plugin process exited" plugin=acme.plug3a`) {
		t.Errorf("the plugin's exit is not logged:\n%s", text)
	}
	<-long
}

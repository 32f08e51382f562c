package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// fix-am leftovers and tester80 #8: every record of a short serve + call
// session under --log-format json has a component (serve's own lines
// component=cli command=serve, the consumer's access line
// component=accesslog), and the provider's record of the call's
// connection closing names the consumer's application.
func TestAS_EveryRecordOfServeAndCallHasComponent(t *testing.T) {
	dir := t.TempDir()
	env := []string{"XDG_RUNTIME_DIR=" + dir}
	p, _ := launchServe(t, binary, "127.0.0.1:0", "file://"+dir, env, "",
		"--log-format", "json", "--log-level", "debug", "--metrics", "127.0.0.1:0", "--shutdown-wait", "100ms")
	waitFor(t, "serve's serving record", func() bool { return strings.Contains(p.logText(), `"msg":"airnode serve: serving"`) })

	// call's default level: its access line goes to a logger of its own (f.accessLogger)
	r := call(t, env, "--registry", "file://"+dir, "--log-format", "json",
		"-p", "accesslog=true", "-p", "application=billing", "demo.Echo", "Echo", "1")
	expectOK(t, r, "1")
	callRecs := jsonLines(t, "call", r.stderr)
	if !hasLine(callRecs, "access", map[string]string{"side": "consumer", "component": "accesslog"}) {
		t.Errorf("call: no consumer access line with component=accesslog: %s", r.stderr)
	}
	waitFor(t, "the provider's close record", func() bool { return strings.Contains(p.logText(), `"msg":"channel closed"`) })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	serveRecs := jsonLines(t, "serve", p.logText())
	for _, want := range []struct {
		msg  string
		attr map[string]string
	}{
		{"airnode serve: serving", map[string]string{"component": "cli", "command": "serve"}},
		{"airnode serve: stopped", map[string]string{"component": "cli", "command": "serve"}},
		{"channel closed", map[string]string{"component": "exchange", "side": "provider", "consumer_application": "billing"}},
	} {
		if !hasLine(serveRecs, want.msg, want.attr) {
			t.Errorf("serve: no %q record with %v", want.msg, want.attr)
		}
	}
	for who, recs := range map[string][]map[string]any{"serve": serveRecs, "call": callRecs} {
		if len(recs) == 0 {
			t.Errorf("%s wrote no record", who)
		}
		for _, rec := range recs {
			if c, _ := rec["component"].(string); c == "" {
				t.Errorf("%s: record without component: %v", who, rec)
			}
		}
	}
}

package cli

import (
	"strings"
	"testing"
)

// Tester61 finding 7: call -p accesslog=true logs the access line at
// info and nothing else of call's log: the node's own info lines
// ("directory: provider added") stay below call's default level, warn.
// With --log-level info they are back, as asked.
func TestF17_CallAccessLogAloneAtInfo(t *testing.T) {
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir)
	reg := "file://" + dir

	r := call(t, nil, "--registry", reg, "-a", "trace=T-777", "-p", "accesslog=true", "-p", "accesslog.attachments=trace", "demo.Echo", "Echo", "1")
	expectOK(t, r, "1")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO msg=access component=accesslog side=consumer") || !strings.Contains(lines[0], "attachments.trace=T-777") {
		t.Errorf("call -p accesslog=true: stderr %q; want the consumer's access line alone", r.stderr)
	}

	// the same under --log-format json: one record, the access one
	r = call(t, nil, "--registry", reg, "--log-format", "json", "-p", "accesslog=true", "demo.Echo", "Echo", "1")
	expectOK(t, r, "1")
	if recs := jsonLines(t, "call", r.stderr); len(recs) != 1 || !hasLine(recs, "access", map[string]string{"level": "INFO", "side": "consumer"}) {
		t.Errorf("call --log-format json -p accesslog=true: stderr %q; want one INFO access record", r.stderr)
	}

	// --log-level info asks for the rest too
	r = call(t, nil, "--registry", reg, "--log-level", "info", "-p", "accesslog=true", "demo.Echo", "Echo", "1")
	expectOK(t, r, "1")
	for _, want := range []string{`msg="provider added"`, "msg=access component=accesslog side=consumer"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("call --log-level info -p accesslog=true: stderr %q; want %q", r.stderr, want)
		}
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Warnings written by code several commands share (the environment check
// of every command, the start of the plugin host) went straight to slog:
// "level=WARN msg=..." under text, a JSON record without "command" under
// json. They go through warnLine as every warning of the command line:
// "airnode: CMD: warning: ..." with their details, and a record carrying
// "command" under --log-format json.
func TestSharedWarningsNameTheirCommand(t *testing.T) {
	env := []string{"AIRNODE_REGISTY=file:///tmp/x"}
	cfg := writeConfig(t, "plugins:\n  - {name: acme.gone, point: service, command: /nonexistent/greeter}\n")

	r := runCommand(t, 60*time.Second, env, "list", "--config", cfg)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 0 || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], `airnode: list: warning: environment variables with the AIRNODE_ prefix that airnode does not read; they have no effect unknown=AIRNODE_REGISTY `) ||
		!strings.HasPrefix(lines[1], `airnode: list: warning: service plugin failed to start, so list could not check its point; serve, which runs it, fails to start with it plugin=acme.gone point=service err=`) {
		t.Errorf("list: exit %d, stderr:\n%s\nwant exit 0 and two lines 'airnode: list: warning: ...'", r.code, r.stderr)
	}

	r = runCommand(t, 60*time.Second, env, "registry", "--log-format", "json", "--config", cfg, "ls", "--registry", "memory://")
	records := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("registry ls --log-format json: stderr line %q is not JSON: %v", line, err)
		}
		if rec["level"] != "WARN" {
			continue
		}
		records++
		msg, _ := rec["msg"].(string)
		if rec["command"] != "registry ls" || !strings.HasPrefix(msg, "registry ls: environment variables with the AIRNODE_ prefix") || rec["unknown"] != "AIRNODE_REGISTY" {
			t.Errorf("registry ls --log-format json: warning %s; want command \"registry ls\", its msg and unknown", line)
		}
	}
	if r.code != 0 || records != 1 {
		t.Errorf("registry ls --log-format json: exit %d, %d warnings, stderr:\n%s\nwant exit 0 and one", r.code, records, r.stderr)
	}
}

// serve's failure to start a filter plugin declared required named
// plugins[0].command only, leaving it unsaid whether required: true made
// it fatal. It did not: serve does not start without any declared plugin
// (README: a provider fails closed either way), so the error names the
// key to fix and says that required decides for call and bench only.
func TestServeRequiredFilterPluginFailureSaysRequiredIsNotTheCause(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: /nonexistent/auth, required: true}\n")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.auth"`, "no such file or directory",
		"("+cfg+`: key "plugins[0].command"; serve does not start without any plugin it declares, required or not: plugins[0].required decides only whether call and bench go on without a filter plugin)`)
	// not required: the same failure, without the sentence on required
	cfg = writeConfig(t, "plugins:\n  - {name: acme.auth, point: filter, command: /nonexistent/auth}\n")
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "memory://")
	expectFail(t, r, `airnode: serve: pluginhost: plugin "acme.auth"`, "("+cfg+`: key "plugins[0].command")`+"\n")
}

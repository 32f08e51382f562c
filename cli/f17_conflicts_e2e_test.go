package cli

import (
	"strings"
	"testing"
	"time"
)

// Tester61 finding 3: two flags or sources that contradict each other are
// a usage error, exit 2, whichever sources they are (two -p, -p and a
// flag, SERVICE_URL's query and a flag or -p, two flags), on every
// command, with the message naming both. Before, only a key given twice
// with -p exited 2 and the rest 1. Nothing listens on the addresses: each
// command refuses before connecting.
func TestF17_ContradictingSourcesExitUsage(t *testing.T) {
	dir := t.TempDir()
	env := []string{"AIRNODE_REGISTRY=file://" + dir, "XDG_RUNTIME_DIR=" + dir}
	const svc = "airnode://127.0.0.1:31751/demo.Echo"
	for _, tc := range []struct {
		sub  string
		args []string
		want string // stderr's start
	}{
		{"call", []string{"-p", "timeout=1s", "-p", "timeout=2s", svc, "Echo", "1"},
			`airnode: call: -p "timeout=1s" and -p "timeout=2s": key "timeout" given twice: give each key once`},
		{"call", []string{"--timeout", "1s", "-p", "timeout=2000", svc, "Echo", "1"},
			"airnode: call: -p timeout=2000 conflicts with --timeout 1s (which sets timeout=1s): give one of them"},
		{"call", []string{svc + "?timeout=500", "--timeout", "2s", "Echo", "1"},
			`airnode: call: timeout=500 in "` + svc + `?timeout=500" conflicts with --timeout 2s (which sets timeout=2s): give one of them`},
		{"call", []string{svc + "?codec=json", "-p", "codec=msgpack", "Echo", "1"},
			`airnode: call: codec=json in "` + svc + `?codec=json" conflicts with -p codec=msgpack: give one of them`},
		{"bench", []string{svc, "-n", "5", "--duration", "1s"},
			"airnode: bench: -n 5 and --duration 1s both given: give one"},
		{"bench", []string{svc, "--timeout", "1s", "-p", "timeout=2s"},
			"airnode: bench: -p timeout=2s conflicts with --timeout 1s (which sets timeout=1s): give one of them"},
		{"bench", []string{svc + "?connections=2", "--connections", "4"},
			`airnode: bench: connections=2 in "` + svc + `?connections=2" conflicts with --connections 4 (which sets connections=4): give one of them`},
		{"health", []string{"127.0.0.1:31751", "--timeout", "1s", "-p", "timeout=2s"},
			"airnode: health: -p timeout=2s conflicts with --timeout 1s (which sets timeout=1s): give one of them"},
		{"serve", []string{"--listen", "127.0.0.1:31752", "--shutdown-wait", "1s", "-p", "shutdown.wait=2s"},
			"airnode: serve: -p shutdown.wait=2s conflicts with --shutdown-wait 1s (which sets shutdown.wait=1s): give one of them"},
		{"serve", []string{"--listen", "127.0.0.1:31752", "--shutdown-timeout", "5s", "-p", "shutdown.timeout=6s"},
			"airnode: serve: -p shutdown.timeout=6s conflicts with --shutdown-timeout 5s (which sets shutdown.timeout=5s): give one of them"},
		{"serve", []string{"--listen", "127.0.0.1:31752", "--transport", "tcp", "-p", "transport=smux"},
			"airnode: serve: -p transport=smux conflicts with --transport tcp (which sets transport=tcp): give one of them"},
		{"serve", []string{"--listen", "127.0.0.1:31752", "-p", "transport=tcp", "-p", "transport=smux"},
			`airnode: serve: -p "transport=tcp" and -p "transport=smux": key "transport" given twice: give each key once`},
	} {
		r := runCommand(t, 20*time.Second, env, tc.sub, tc.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want exit %d and stderr starting %q", tc.sub, tc.args, r.code, r.stdout, r.stderr, exitUsage, tc.want)
		}
		if strings.Contains(r.stderr, "msg=listening") {
			t.Errorf("%s %v listened before refusing:\n%s", tc.sub, tc.args, r.stderr)
		}
	}
	// the same value both ways is no contradiction: the command runs (and
	// fails for the address nobody listens on, exit 1)
	r := runCommand(t, 20*time.Second, env, "call", "--timeout", "1s", "-p", "timeout=1000", svc, "Echo", "1")
	if r.code != 1 || strings.Contains(r.stderr, "give one") {
		t.Errorf("call --timeout 1s -p timeout=1000: exit %d, stderr %q; want exit 1 from the call itself", r.code, r.stderr)
	}
}

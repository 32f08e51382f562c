package cli

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFixP_ExitStatusClasses (fix-p): one rule for every command. A usage
// error (the command line itself is wrong, nothing was attempted) prints
// "airnode: CMD: <what was wrong, and what is allowed>" and exits 2, a
// flag's value out of its range included (bench's were exit 1); a
// failure of what the command tried, the kernel's check of a URL key's
// value included, exits 1.
func TestFixP_ExitStatusClasses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens there once closed
	ln.Close()
	target := "airnode://" + closed + "/demo.Echo"
	for _, c := range []struct {
		args   []string
		code   int
		prefix string // of stderr
		has    string // in stderr: what is allowed, or why it failed
	}{
		{[]string{"bench", "--req", "-1", target}, exitUsage, "airnode: bench: --req -1: ", "want 0 or more bytes"},
		{[]string{"bench", "--duration", "0", target}, exitUsage, "airnode: bench: --duration 0s: ", "want a positive duration"},
		{[]string{"bench", "-c", "0", target}, exitUsage, "airnode: bench: -c 0: ", "want 1 to 1,000,000"},
		{[]string{"bench", "--warmup", "-5", target}, exitUsage, "airnode: bench: --warmup -5: ", "want 0 or more"},
		{[]string{"bench", "--mix-c", "0", target}, exitUsage, "airnode: bench: --mix-c 0: ", "want 1 or more"},
		{[]string{"bench", "airnode://127.0.0.1/demo.Echo"}, exitUsage, `airnode: bench: SERVICE_URL "airnode://127.0.0.1/demo.Echo": `, "has no port"},
		{[]string{"call", "airnode://127.0.0.1:0/demo.Echo", "Echo", "1"}, exitUsage, `airnode: call: SERVICE_URL "airnode://127.0.0.1:0/demo.Echo": `, "want a port from 1 to 65535"},
		{[]string{"call", target, "Echo", "{bad"}, exitUsage, "airnode: call: argument ", "is not JSON"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--registry", "memory://", "--shutdown-timeout", "-1s"}, exitUsage, "airnode: serve: config: flag --shutdown-timeout: ", "must be > 0"},
		{[]string{"stats", "--timeout", "0", closed}, exitUsage, "airnode: stats: --timeout 0s: ", "want a positive duration"},
		{[]string{"stats", "nohost"}, exitUsage, `airnode: stats: ADDRESS "nohost": `, "want the host:port"},
		{[]string{"plugin", "check", "--start-timeout", "0", "/bin/true"}, exitUsage, "airnode: plugin check: --start-timeout 0s: ", "want a positive duration"},
		{[]string{"plugin", "check", "--sha256", "zz", "/bin/true"}, exitUsage, `airnode: plugin check: --sha256 "zz": `, "64 hexadecimal digits"},
		{[]string{"list", "lodbalance"}, exitUsage, `airnode: list: unknown point "lodbalance"`, `did you mean "loadbalance"?`},
		{[]string{"list", "--provider", target}, exitUsage, "airnode: list: --provider URL needs --explain", ""},
		{[]string{"completion", "bash", "extra"}, exitUsage, `airnode: completion bash: unexpected argument "extra"`, "it takes no arguments"},
		// a URL key's value the command line gave that the kernel refuses
		// at Refer or Export, named as given (fix-bs)
		{[]string{"call", "-p", "retries=x", target, "Echo", "1"}, exitUsage, "airnode: call: -p retries=x: service demo.Echo: ", `URL key "retries": want an integer`},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--registry", "memory://", "-p", "weight=-5"}, exitUsage, "airnode: serve: -p weight=-5: ", `URL key "weight"`},
		// failures of what the command tried: exit 1
		{[]string{"call", "--timeout", "5s", target, "Echo", "1"}, 1, "CHANNEL_INACTIVE: ", "connection refused"},
		{[]string{"bench", "-n", "1", "--timeout", "5s", target}, 1, "airnode: bench: no provider of demo.Echo available: ", "connection refused"},
		{[]string{"stats", "--timeout", "5s", closed}, 1, "airnode: stats: metrics: stats from " + closed, "connection refused"},
		{[]string{"plugin", "check", filepath.Join(t.TempDir(), "missing")}, 1, "airnode: plugin check: ", "no such file"},
		{[]string{"registry", "ls", "--registry", "file://" + filepath.Join(t.TempDir(), "missing")}, 1, "airnode: ", "missing"},
		{[]string{"list", "loadbalance", "rundrobin"}, 1, `airnode: list: unknown loadbalance "rundrobin"`, `did you mean "roundrobin"?`},
	} {
		r := runCommand(t, 30*time.Second, noAirnodeEnv, c.args[0], c.args[1:]...)
		if r.code != c.code || !strings.HasPrefix(r.stderr, c.prefix) || !strings.Contains(r.stderr, c.has) {
			t.Errorf("airnode %s: exit %d, stderr %q; want exit %d and stderr starting %q with %q", strings.Join(c.args, " "), r.code, r.stderr, c.code, c.prefix, c.has)
		}
	}
	// bench --json still prints its one object for a usage error
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "bench", "--json", "--req", "-1", target)
	if r.code != exitUsage || !strings.Contains(r.stdout, `"error": "bench: --req -1: want 0 or more bytes"`) {
		t.Errorf("bench --json --req -1: exit %d, stdout %q; want exit 2 and the error object", r.code, r.stdout)
	}
}

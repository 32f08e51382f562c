package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fix-cc: what fix-bs left. A connection key out of its bounds
// (-p connections=100) exited 1 with the kernel's bare "connections=100:
// want 1 to 64"; bench --idle, which dials without a node, refused a bad
// transport or codec in the old words (exit 1, no flag named); list -p
// said pflag's "unknown shorthand flag: 'p' in -p". Each is now a usage
// error (exit 2) in the words of the other -p errors.
func TestCC_CommandLineLeftoversAreUsageErrors(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:36110" // nothing listens: the keys are refused before any dial
	echo := "airnode://" + addr + "/demo.Echo"
	conns := `invalid value "100" for URL key "connections": want an integer from 1 to 64`
	pid := strconv.Itoa(os.Getpid()) // --idle's --server-pid: any live process; nothing is dialled
	for _, tc := range []struct {
		name string
		sub  string
		args []string
		want string // the whole of stderr
	}{
		{"call connections", "call", []string{echo, "Echo", `"hi"`, "-p", "connections=100"},
			`airnode: call: -p connections=100: service demo.Echo: ` + conns},
		{"call connect.timeout", "call", []string{echo, "Echo", "-p", "connect.timeout=0"},
			`airnode: call: -p connect.timeout=0: service demo.Echo: invalid value "0" for URL key "connect.timeout": want a duration more than 0, such as 3s`},
		{"call reconnect.backoff", "call", []string{echo + "?reconnect.backoff=1h", "Echo"},
			`airnode: call: SERVICE_URL key reconnect.backoff=1h: service demo.Echo: invalid value "1h" for URL key "reconnect.backoff": want a duration more than 0 and at most 30s, such as 100ms`},
		{"health connections", "health", []string{addr, "-p", "connections=100"},
			`airnode: health: -p connections=100: service airnode.Health: ` + conns},
		{"bench connections", "bench", []string{echo, "-n", "1", "-p", "connections=100"},
			`airnode: bench: -p connections=100: service demo.Echo: ` + conns},

		{"bench --idle transport", "bench", []string{echo, "--idle", "2", "--server-pid", pid, "-p", "transport=smx"},
			`airnode: bench: -p transport=smx: service demo.Echo: unknown transport "smx" (available: smux, tcp); did you mean "smux"?`},
		{"bench --idle --codec", "bench", []string{echo, "--idle", "2", "--server-pid", pid, "--codec", "jsn"},
			`airnode: bench: --codec jsn: service demo.Echo: unknown codec "jsn" (available: json, msgpack, protobuf); did you mean "json"?`},
		{"bench --idle timeout", "bench", []string{echo, "--idle", "2", "--server-pid", pid, "-p", "timeout=abc"},
			`airnode: bench: -p timeout=abc: service demo.Echo: invalid value "abc" for URL key "timeout": want a duration such as 1.5s, 200ms or 3000 (milliseconds)`},
		{"bench --idle connect.timeout", "bench", []string{echo, "--idle", "2", "--server-pid", pid, "-p", "connect.timeout=0"},
			`airnode: bench: -p connect.timeout=0: service demo.Echo: invalid value "0" for URL key "connect.timeout": want a duration more than 0, such as 3s`},
		{"bench --idle without --server-pid", "bench", []string{echo, "--idle", "2"},
			`airnode: bench: --idle needs --server-pid (the provider's RSS is read from /proc)`},

		{"list -p", "list", []string{"-p", "x=y"},
			`airnode: list: list takes no -p: give the keys in the URL of --explain: airnode list --explain 'demo.Echo?loadbalance=roundrobin' (airnode list --help lists its flags)`},
		{"list --param", "list", []string{"--explain", "demo.Echo", "--param", "timeout=1s"},
			`airnode: list: list takes no -p: give the keys in the URL of --explain: airnode list --explain 'demo.Echo?loadbalance=roundrobin' (airnode list --help lists its flags)`},
		{"stats -p", "stats", []string{addr, "-p", "x=y"},
			`airnode: stats: stats takes no -p: URL keys (-p key=value) are for serve, call, bench and health (airnode stats --help lists its flags)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, tc.sub, tc.args...)
			expectUsage(t, r, tc.want)
			if got := strings.TrimSuffix(r.stderr, "\n"); got != tc.want {
				t.Errorf("stderr %q; want only %q", r.stderr, tc.want)
			}
		})
	}
}

// fix-cc: health -p cluster=failovr printed a WARN that retries (which
// health sets itself, retries=0) "is read by another cluster" before its
// usage error; with -p cluster=failfast, a cluster that reads no retries,
// every probe warned so. The usage error is now the only line, and a
// probe with another cluster warns of nothing it was not given.
func TestCC_HealthClusterWarnsOfNoKeyItWasNotGiven(t *testing.T) {
	t.Parallel()
	r := runCommand(t, 20*time.Second, nil, "health", "-p", "cluster=failovr", "127.0.0.1:36111")
	want := `airnode: health: -p cluster=failovr: service airnode.Health: unknown cluster "failovr" (available: failfast, failover, failsafe, forking); did you mean "failover"?` + "\n"
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("cluster=failovr: exit %d, stderr %q; want exit 2 and only %q", r.code, r.stderr, want)
	}
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, c := range []string{"failfast", "failover", "forking"} {
		r := runCommand(t, 20*time.Second, nil, "health", "-p", "cluster="+c, p.addr)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" || r.stderr != "" {
			t.Errorf("cluster=%s: exit %d, stdout %q, stderr %q; want exit 0, SERVING and nothing on stderr", c, r.code, r.stdout, r.stderr)
		}
	}
}

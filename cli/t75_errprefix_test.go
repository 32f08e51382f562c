package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// tester75 #1: every line a failed command prints on stderr (but a
// call's `STATUS: message`) starts "airnode: CMD: ", CMD as typed, once;
// serve's started "airnode: config: ...", stats' "airnode: metrics: ...",
// registry ls' "airnode: list services of ...". The cause's own text
// follows as it was.
func TestT75_FailuresNameTheCommandOnce(t *testing.T) {
	t.Parallel()
	bad := writeConfig(t, "bogus: 1\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	closed := testaddr.Reserved(t) // nothing listens there
	for _, tc := range []struct {
		args []string
		want string // the line starts with it
	}{
		{[]string{"serve", "--config", missing, "--listen", "127.0.0.1:0"}, "airnode: serve: config: "},
		{[]string{"serve", "--config", bad, "--listen", "127.0.0.1:0"}, "airnode: serve: config: " + bad + `: unknown key "bogus"`},
		{[]string{"call", "--config", bad, "demo.Echo", "Echo", "1"}, "airnode: call: config: "},
		{[]string{"bench", "--config", bad, "-n", "1", "airnode://" + closed + "/demo.Echo"}, "airnode: bench: config: "},
		{[]string{"list", "--config", bad}, "airnode: list: config: "},
		{[]string{"registry", "ls", "--config", bad}, "airnode: registry ls: config: "},
		{[]string{"registry", "ls", "--registry", "zookeeper://" + closed + "?connect.timeout=300ms"}, "airnode: registry ls: list services of zookeeper://" + closed},
		{[]string{"stats", "--timeout", "5s", closed}, "airnode: stats: metrics: stats from " + closed},
		{[]string{"stats"}, "airnode: stats: missing ADDR"},
		{[]string{"plugin", "check", filepath.Join(t.TempDir(), "missing")}, "airnode: plugin check: pluginhost: "},
		{[]string{"registry", "frob"}, `airnode: registry: unknown command "frob"`},
		{[]string{"call", "demo.Echo", "Sleep", "-x"}, "airnode: call: unknown shorthand flag"},
	} {
		r := runCommand(t, 30*time.Second, noAirnodeEnv, tc.args[0], tc.args[1:]...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code == 0 || strings.Contains(line, "\n") || !strings.HasPrefix(line, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want one line starting %q", tc.args, r.code, r.stderr, tc.want)
		}
		cmd := strings.SplitN(strings.TrimPrefix(tc.want, "airnode: "), ":", 2)[0]
		if strings.Contains(line, cmd+": "+cmd+": ") {
			t.Errorf("%v: %q names %s twice", tc.args, line, cmd)
		}
	}
}

package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-cj (tester93): these values, given on the command line, exited 1
// (call's as CLIENT_ERROR, serve's -p Slep.timeout without naming -p),
// where README's exit-status table and every other refused flag value
// say usage (exit 2), naming the flag as typed: --registry without a
// scheme (serve alone said 2), a misspelt registry scheme or registry
// key, -p heartbeat=-1, an empty token, a bare heartbeat and
// heartbeat.interval that disagree, a method-level key of a method the
// service lacks, and a direct SERVICE_URL with no interface (the
// kernel's "no service interface" named a connect.timeout never given).
func TestCJ_CommandLineValuesAreUsageErrors(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:36760" // nothing listens: each is refused before any dial
	echo := "airnode://" + addr + "/demo.Echo"
	const zkAddr = "127.0.0.1:36761" // nothing listens either
	scheme := `unknown registry "zookeper" (available: direct, file, memory, zookeeper); did you mean "zookeeper"?`
	badKey := `zookeeper registry: unknown URL key "sesion.timeout" (known: `
	noScheme := `url: "/tmp/x" has no scheme (want scheme://host[:port]/path)`
	type tc struct {
		name string
		sub  string
		args []string
		want string // stderr's start
		more []string
	}
	cases := []tc{
		{"call -p heartbeat=-1", "call", []string{"-p", "heartbeat=-1", echo, "Echo", `"x"`},
			`airnode: call: -p heartbeat=-1: service demo.Echo: unknown heartbeat "-1" (available: dual, idle, none)`, nil},
		{"call -p token=", "call", []string{"-p", "token=", echo, "Echo", `"x"`},
			`airnode: call: -p token='': service demo.Echo: token: URL key "token" is empty: want a secret, true for a random one, or false`, nil},
		{"call ?token=", "call", []string{echo + "?token=", "Echo", `"x"`},
			`airnode: call: SERVICE_URL key token='': service demo.Echo: token: URL key "token" is empty`, nil},
		{"call heartbeat twice", "call", []string{"-p", "heartbeat=3000", "-p", "heartbeat.interval=2000", echo, "Echo", `"x"`},
			`airnode: call: -p heartbeat=3000, -p heartbeat.interval=2000: service demo.Echo: heartbeat idle: heartbeat=3000 (Dubbo's bare interval, 3s) and heartbeat.interval=2000 give the heartbeat interval twice`, nil},
		{"serve -p Slep.timeout", "serve", []string{"-p", "Slep.timeout=1s"},
			`airnode: serve: -p Slep.timeout=1s: service demo.Echo: URL key "Slep.timeout" sets timeout for method Slep, but service demo.Echo has no method Slep`, []string{`did you mean "Sleep"?`}},
		{"call no interface", "call", []string{"airnode://" + addr, "Echo", `"x"`},
			`airnode: call: SERVICE_URL "airnode://` + addr + `" names no service interface after the address: SERVICE_URL is a service key`, []string{"airnode://host:port/demo.Echo for a direct call"}},
		{"bench no interface", "bench", []string{"-n", "1", "airnode://" + addr},
			`airnode: bench: SERVICE_URL "airnode://` + addr + `" names no service interface after the address`, nil},
	}
	for _, reg := range []struct{ name, raw, cause string }{
		{"no scheme", "/tmp/x", noScheme},
		{"misspelt scheme", "zookeper://" + zkAddr, scheme},
		{"misspelt key", "zookeeper://" + zkAddr + "?sesion.timeout=1s", badKey},
	} {
		by := "--registry " + reg.raw + ": " + reg.cause
		serveBy := "airnode: serve: " + by
		if reg.cause == noScheme { // serve's own flag check, as its --listen's (exit 2 before)
			serveBy = "airnode: serve: config: flag --registry: " + noScheme
		}
		cases = append(cases,
			tc{"serve --registry " + reg.name, "serve", []string{"--registry", reg.raw}, serveBy, nil},
			tc{"registry ls --registry " + reg.name, "registry", []string{"ls", "--registry", reg.raw}, "airnode: registry ls: " + by, nil},
			tc{"registry watch --registry " + reg.name, "registry", []string{"watch", "--registry", reg.raw, "demo.Echo"}, "airnode: registry watch: " + by, nil},
			tc{"bench --registry " + reg.name, "bench", []string{"-n", "1", "--registry", reg.raw, "demo.Echo"}, "airnode: bench: " + by, nil},
			tc{"list --explain --registry " + reg.name, "list", []string{"--explain", "demo.Echo", "--registry", reg.raw}, "airnode: list: " + by, nil},
			tc{"call --registry " + reg.name, "call", []string{"--registry", reg.raw, "demo.Echo", "Echo", `"x"`}, "airnode: call: " + by, nil},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := tc.args
			if tc.sub == "serve" {
				args = append([]string{"--listen", "127.0.0.1:0"}, args...)
				if !strings.Contains(strings.Join(args, " "), "--registry") {
					args = append(args, "--registry", "file://"+dir)
				}
			}
			r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, tc.sub, args...)
			expectUsage(t, r, tc.want, tc.more...)
			if strings.Contains(r.stderr, "CLIENT_ERROR") || strings.Contains(r.stderr, "serving") {
				t.Errorf("a usage error reads as a call's status or came after serving:\n%s", r.stderr)
			}
		})
	}
}

// fix-cj: the same values from the environment or plugins.yaml are no
// usage error: the command line was right, the command failed (exit 1).
func TestCJ_SameValuesElsewhereStillFail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"XDG_RUNTIME_DIR=" + dir, "AIRNODE_REGISTRY=zookeper://127.0.0.1:36762"}
	r := runCommand(t, 20*time.Second, env, "call", "demo.Echo", "Echo", `"x"`)
	if r.code != 1 || !strings.Contains(r.stderr, `unknown registry "zookeper"`) || strings.Contains(r.stderr, "--registry zookeper") {
		t.Errorf("call with AIRNODE_REGISTRY's misspelt scheme: exit %d, stderr %q; want exit 1 not naming --registry", r.code, r.stderr)
	}
	r = runCommand(t, 20*time.Second, env, "registry", "ls")
	if r.code != 1 || !strings.Contains(r.stderr, `unknown registry "zookeper"`) {
		t.Errorf("registry ls with AIRNODE_REGISTRY's misspelt scheme: exit %d, stderr %q; want exit 1", r.code, r.stderr)
	}
	cfg := writeConfig(t, "references:\n  - {interface: demo.Echo, url: \"airnode://127.0.0.1:36763/demo.Echo\", params: {heartbeat: \"-1\"}}\n")
	r = runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "call", "--config", cfg, "demo.Echo", "Echo", `"x"`)
	if r.code != 1 || !strings.Contains(r.stderr, `unknown heartbeat "-1"`) || strings.Contains(r.stderr, "-p ") {
		t.Errorf("call with the file's heartbeat=-1: exit %d, stderr %q; want exit 1", r.code, r.stderr)
	}
}

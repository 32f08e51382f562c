package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-bs: a -p key=value the kernel refuses (an unknown extension name, a
// malformed duration) exited 1, and call, bench and health named neither
// the flag nor the value (`CLIENT_ERROR: kernel: refer demo.Echo: unknown
// loadbalance ...`), where serve said `serve: -p loadbalance=roundrobn:
// service demo.Echo: ...`. Every command now names where the command line
// gave the key, as serve does, with the names available, and exits 2, as
// -p foo (no "=") and every other flag of the wrong form do. The same
// value from the configuration file still fails the command (exit 1).
func TestBS_BadParamIsAUsageErrorNamingTheFlag(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:34810" // nothing listens: the keys are refused before any dial
	echo := "airnode://" + addr + "/demo.Echo"
	lbs := `(available: consistenthash, leastactive, p2c, random, roundrobin, shortestresponse); did you mean "roundrobin"?`
	dur := `invalid value "abc" for URL key "timeout": want a duration`
	conns := `invalid value "100" for URL key "connections": want an integer from 1 to 64`
	for _, tc := range []struct {
		name string
		sub  string
		args []string
		want string // stderr's start
		more []string
	}{
		{"serve loadbalance", "serve", []string{"-p", "loadbalance=roundrobn"},
			`airnode: serve: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"serve timeout", "serve", []string{"-p", "timeout=abc"}, `airnode: serve: -p timeout=abc: service demo.Echo: ` + dur, nil},
		{"serve malformed", "serve", []string{"-p", "foo"}, `airnode: serve: -p "foo": want key=value`, nil},
		{"serve --transport", "serve", []string{"--transport", "smx"}, `airnode: serve: --transport smx: service demo.Echo: unknown transport "smx" (available: smux, tcp)`, nil},

		{"call loadbalance", "call", []string{echo, "Echo", `"hi"`, "-p", "loadbalance=roundrobn"},
			`airnode: call: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"call timeout", "call", []string{echo, "Echo", `"hi"`, "-p", "timeout=abc"}, `airnode: call: -p timeout=abc: service demo.Echo: ` + dur, nil},
		{"call malformed", "call", []string{echo, "Echo", "-p", "foo"}, `airnode: call: -p "foo": want key=value`, nil},
		{"call method-level cluster", "call", []string{echo, "Echo", "-p", "methods.Echo.cluster=failovr"},
			`airnode: call: -p methods.Echo.cluster=failovr: service demo.Echo: URL key "methods.Echo.cluster": unknown cluster "failovr" (available: failfast, failover, failsafe, forking); did you mean "failover"?`, nil},
		{"call --codec", "call", []string{echo, "Echo", "--codec", "jsn"},
			`airnode: call: --codec jsn: service demo.Echo: unknown codec "jsn" (available: json, msgpack, protobuf); did you mean "json"?`, nil},
		{"call SERVICE_URL query", "call", []string{echo + "?loadbalance=roundrobn", "Echo"},
			`airnode: call: SERVICE_URL key loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"call two keys, one line each", "call", []string{echo, "Echo", "-p", "loadbalance=roundrobn", "-p", "timeout=abc"},
			`airnode: call: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" `, []string{"\ncall: -p timeout=abc: service demo.Echo: " + dur}},

		{"bench loadbalance", "bench", []string{echo, "-n", "1", "-p", "loadbalance=roundrobn"},
			`airnode: bench: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"bench timeout", "bench", []string{echo, "-n", "1", "-p", "timeout=abc"}, `airnode: bench: -p timeout=abc: service demo.Echo: ` + dur, nil},
		{"bench malformed", "bench", []string{echo, "-n", "1", "-p", "foo"}, `airnode: bench: -p "foo": want key=value`, nil},
		{"bench connections", "bench", []string{echo, "-n", "1", "-p", "connections=100"}, `airnode: bench: -p connections=100: service demo.Echo: ` + conns, nil},

		{"health loadbalance", "health", []string{addr, "-p", "loadbalance=roundrobn"},
			`airnode: health: -p loadbalance=roundrobn: service airnode.Health: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"health timeout", "health", []string{addr, "-p", "timeout=abc"}, `airnode: health: -p timeout=abc: service airnode.Health: ` + dur, nil},
		{"health malformed", "health", []string{addr, "-p", "foo"}, `airnode: health: -p "foo": want key=value`, nil},

		{"list --explain loadbalance", "list", []string{"--explain", echo + "?loadbalance=roundrobn"},
			`airnode: list: --explain URL key loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" ` + lbs, nil},
		{"list --explain timeout", "list", []string{"--explain", echo + "?timeout=abc"}, `airnode: list: --explain URL key timeout=abc: service demo.Echo: ` + dur, nil},
		{"list --provider codec", "list", []string{"--explain", "demo.Echo", "--provider", echo + "?codec=jsn"},
			`airnode: list: --provider URL key codec=jsn: service demo.Echo: unknown codec "jsn" (available: json, msgpack, protobuf); did you mean "json"?`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expectCommandLineRefusal(t, tc.sub, tc.args, tc.want, tc.more...)
		})
	}
}

// expectCommandLineRefusal runs airnode sub args (serve on 127.0.0.1:0
// with a file registry of its own) and expects a usage error (exit 2)
// whose stderr starts with want and holds each of more, reading as
// neither a call's status nor coming after serving.
func expectCommandLineRefusal(t *testing.T, sub string, args []string, want string, more ...string) {
	t.Helper()
	dir := t.TempDir()
	if sub == "serve" {
		args = append([]string{"--listen", "127.0.0.1:0", "--registry", "file://" + dir}, args...)
	}
	r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, sub, args...)
	expectUsage(t, r, want, more...)
	if strings.Contains(r.stderr, "CLIENT_ERROR") || strings.Contains(r.stderr, "serving") {
		t.Errorf("a usage error reads as a call's status or came after serving:\n%s", r.stderr)
	}
}

// fix-bs: the same refused value from plugins.yaml is no usage error: the
// command line was right, the command failed (exit 1), naming the file.
func TestBS_BadKeyFromTheFileStillFailsTheCommand(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "protocol: {loadbalance: roundrobn}\nreferences:\n  - {interface: demo.Echo, params: {loadbalance: roundrobn}}\n")
	dir := t.TempDir()
	r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "file://"+dir)
	expectFail(t, r, `airnode: serve: config: `+cfg, `unknown loadbalance "roundrobn"`)
	r = runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "call", "--config", cfg, "airnode://127.0.0.1:34811/demo.Echo", "Echo")
	if r.code != 1 || !strings.Contains(r.stderr, `unknown loadbalance "roundrobn"`) || strings.Contains(r.stderr, "-p ") {
		t.Fatalf("call with the file's bad balancer: exit %d, stderr %q; want exit 1 naming the file's value", r.code, r.stderr)
	}
}

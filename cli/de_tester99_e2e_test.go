package cli

import (
	"strings"
	"testing"
	"time"
)

// tester99 #1, #2: an empty value of a key that selects an extension
// (loadbalance=, cluster=, a bare ?loadbalance) was taken for the
// default without a word, while an empty timeout= was refused; a
// group or version pattern and a SERVICE_URL of another protocol were
// refused with exit 1, a refused key's value of the command line
// exits 2 everywhere else. Each is now a usage error (exit 2) naming
// where the command line gave it, by call, bench, health, list
// --explain and serve alike.
func TestDE_EmptyExtensionKeysAndRefusedURLsExit2(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:42610" // nothing listens: each is refused before any dial
	echo := "airnode://" + addr + "/demo.Echo"
	lbs := "want one of consistenthash, leastactive, p2c, random, roundrobin, shortestresponse"
	pattern := `version=1.*: "1.*" is a pattern; version takes one value, a comma-separated list (version=a,b) or * alone for any`
	gpattern := `group=g*: "g*" is a pattern; group takes one value, a comma-separated list (group=a,b) or * alone for any`
	dubbo := `unknown protocol "dubbo" (want airnode)`
	for _, tc := range []struct {
		name, sub string
		args      []string
		want      string // stderr's start
	}{
		{"call loadbalance=", "call", []string{"-p", "loadbalance=", echo, "Echo", `"x"`},
			`airnode: call: -p loadbalance='': service demo.Echo: loadbalance= is empty: ` + lbs},
		{"call cluster=", "call", []string{"-p", "cluster=", echo, "Echo", `"x"`},
			`airnode: call: -p cluster='': service demo.Echo: cluster= is empty: want one of failfast, failover, failsafe, forking`},
		{"call ?loadbalance", "call", []string{echo + "?loadbalance", "Echo", `"x"`},
			`airnode: call: SERVICE_URL key loadbalance='': service demo.Echo: loadbalance= is empty: ` + lbs},
		{"call methods.Echo.codec=", "call", []string{"-p", "methods.Echo.codec=", echo, "Echo", `"x"`},
			`airnode: call: -p methods.Echo.codec='': service demo.Echo: methods.Echo.codec= is empty: want one of json, msgpack, protobuf`},
		{"call heartbeat=", "call", []string{"-p", "heartbeat=", echo, "Echo", `"x"`},
			`airnode: call: -p heartbeat='': service demo.Echo: heartbeat= is empty: want one of dual, idle, none`},
		{"bench transport=", "bench", []string{"-n", "1", "-p", "transport=", echo},
			`airnode: bench: -p transport='': service demo.Echo: transport= is empty: want one of smux, tcp`},
		{"health loadbalance=", "health", []string{"-p", "loadbalance=", addr},
			`airnode: health: -p loadbalance='': service airnode.Health: loadbalance= is empty: ` + lbs},
		{"list --explain ?loadbalance=", "list", []string{"--explain", echo + "?loadbalance="},
			`airnode: list: --explain URL key loadbalance='': service demo.Echo: loadbalance= is empty: ` + lbs},
		{"serve codec=", "serve", []string{"-p", "codec="},
			`airnode: serve: -p codec='': service demo.Echo: codec= is empty: want one of json, msgpack, protobuf`},

		{"call version=1.*", "call", []string{"-p", "version=1.*", echo, "Echo", `"x"`},
			`airnode: call: -p version=1.*: service demo.Echo:1.*: ` + pattern},
		{"call ?group=g*", "call", []string{echo + "?group=g*", "Echo", `"x"`},
			`airnode: call: SERVICE_URL key group=g*: service g*/demo.Echo: ` + gpattern},
		{"bench version=1.*", "bench", []string{"-n", "1", "-p", "version=1.*", echo},
			`airnode: bench: -p version=1.*: service demo.Echo:1.*: ` + pattern},
		{"health version=1.*", "health", []string{"-p", "version=1.*", addr},
			`airnode: health: -p version=1.*: service airnode.Health:1.*: ` + pattern},
		{"list --explain ?version=1.*", "list", []string{"--explain", echo + "?version=1.*"},
			`airnode: list: --explain URL key version=1.*: service demo.Echo:1.*: ` + pattern},
		{"call dubbo://", "call", []string{"dubbo://" + addr + "/demo.Echo", "Echo", `"x"`},
			`airnode: call: service demo.Echo: ` + dubbo},
		{"bench dubbo://", "bench", []string{"-n", "1", "dubbo://" + addr + "/demo.Echo"},
			`airnode: bench: service demo.Echo: ` + dubbo},
		{"health dubbo://", "health", []string{"dubbo://" + addr},
			`airnode: health: service airnode.Health: ` + dubbo},
		{"list --explain dubbo://", "list", []string{"--explain", "dubbo://" + addr + "/demo.Echo"},
			`airnode: list: service demo.Echo: ` + dubbo},
		{"call protocol=dubbo", "call", []string{"-p", "protocol=dubbo", echo, "Echo", `"x"`},
			`airnode: call: -p protocol=dubbo: service demo.Echo: unknown protocol "dubbo" in URL key "protocol" (want airnode)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			expectCommandLineRefusal(t, tc.sub, tc.args, tc.want)
		})
	}
}

// tester99 #1: the same empty value from plugins.yaml is refused too,
// as a failure of the command (exit 1): the command line was right.
func TestDE_EmptyExtensionKeyFromTheFileExits1(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "references:\n  - {interface: demo.Echo, params: {loadbalance: \"\"}}\n")
	dir := t.TempDir()
	r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "call", "--config", cfg, "airnode://127.0.0.1:42611/demo.Echo", "Echo")
	if r.code != 1 || !strings.Contains(r.stderr, "loadbalance= is empty: want one of ") || strings.Contains(r.stderr, "-p ") {
		t.Fatalf("call with the file's empty balancer: exit %d, stderr %q; want exit 1 saying loadbalance= is empty", r.code, r.stderr)
	}
}

// tester99 #1: list --explain of a direct URL took the URL's own keys
// for a provider's ("the provider's loadbalance=... is not used: the
// consumer chooses loadbalance from its own reference URL"): a direct
// URL's keys are its consumer's. A value the configuration's protocol
// alone gives is noted as a direct URL's provider value.
func TestDE_ExplainDirectURLKeysAreTheConsumers(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "protocol: {cluster: failfast}\n")
	dir := t.TempDir()
	r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "list", "--config", cfg, "--explain", "airnode://127.0.0.1:42612/demo.Echo?loadbalance=roundrobin")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "loadbalance":
			if !strings.Contains(line, "roundrobin") || strings.Contains(line, "provider's") {
				t.Errorf("loadbalance row %q: want the URL's roundrobin, no provider's value", line)
			}
		case "cluster":
			if !strings.Contains(line, "the provider's cluster=failfast (config protocol) is not used: a direct URL names its provider") {
				t.Errorf("cluster row %q: want the config's failfast said unused by a direct URL", line)
			}
		}
	}
}

// tester99 #3: serve's warning of a weight over the balancers' most said
// component=kernel twice (the node's logger has it, and the line added it).
func TestDE_HugeWeightWarningSaysComponentOnce(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "weight=99999999999")
	var warn string
	for _, line := range strings.Split(p.logText(), "\n") {
		if strings.Contains(line, "published as 2147483647") {
			warn = line
		}
	}
	if warn == "" || strings.Count(warn, "component=") != 1 {
		t.Fatalf("the weight warning %q: want one with component= once; log:\n%s", warn, p.logText())
	}
}

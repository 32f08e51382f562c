package cli

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// valueFlags returns every flag that takes a value (all but bools) of
// every command of the airnode tree, as command path (without
// "airnode") and flag name, inherited ones included.
func valueFlags(t *testing.T) [][2]string {
	t.Helper()
	var out [][2]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), "airnode"))
		if path != "" && !c.Hidden && c.Name() != "help" {
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if f.Value.Type() != "bool" {
					out = append(out, [2]string{path, f.Name})
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(newApp(io.Discard, io.Discard)))
	if len(out) < 40 {
		t.Fatalf("found only the flags %v", out)
	}
	return out
}

// A flag that takes a value refuses another flag of its command as that
// value, on every command, as a usage error naming the flag and what it
// takes (tester95 #1: `call --registry --timeout 2s shop.Inventory Stock`
// took "--timeout" for the registry and "2s" for the SERVICE_URL, and
// said "did you swap SERVICE and METHOD?").
func TestFlagValueThatIsAFlagOfTheCommandIsRefused(t *testing.T) {
	for _, vf := range valueFlags(t) {
		next := "--log-level" // every command's
		if vf[1] == "log-level" {
			next = "--config"
		}
		args := append(strings.Fields(vf[0]), "--"+vf[1], next, "x")
		r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
		want := "airnode: " + vf[0] + ": --" + vf[1] + ": got \"" + next + "\" as its value: give --" + vf[1] + " its value ("
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("airnode %s: exit %d, stderr %q; want exit 2 and a line starting %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
}

// tester95's command lines, a shorthand and the "=value" forms, and the
// words of what each flag takes.
func TestFlagValueThatIsAFlagNamesWhatTheFlagTakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "--registry", "--timeout", "2s", "shop.Inventory", "Stock", `"a"`},
			`airnode: call: --registry: got "--timeout" as its value: give --registry its value (registry URL for a SERVICE_URL without host) before the next flag (airnode call --help lists its flags)`},
		{[]string{"list", "--explain", "--config", "c2.yaml", "URL"},
			`airnode: list: --explain: got "--config" as its value: give --explain its value (explain how URL selects an extension at every point, for the service and each method) before the next flag (airnode list --help lists its flags)`},
		{[]string{"list", "--explain=--config=c2.yaml", "URL"},
			`airnode: list: --explain: got "--config=c2.yaml" as its value: give --explain`},
		{[]string{"bench", "-n", "-c", "10", "airnode://127.0.0.1:1/demo.Echo"},
			`airnode: bench: --calls: got "-c" as its value: give --calls its value (a whole number) before the next flag`},
		{[]string{"call", "--timeout", "-p=x=1", "demo.Echo", "Echo"},
			`airnode: call: --timeout: got "-p=x=1" as its value: give --timeout its value (a duration such as 500ms, 2s or 1m30s, or a bare number of milliseconds (500)) before the next flag`},
		{[]string{"serve", "--advertise", "--demo"},
			`airnode: serve: --advertise: got "--demo" as its value: give --advertise its value (address to publish in the registry instead of the listen address: HOST, HOST:PORT`},
		{[]string{"bench", "--req", "-h", "airnode://127.0.0.1:1/demo.Echo"},
			`airnode: bench: --req: got "-h" as its value: give --req its value (a byte size: a whole number of bytes (100)`},
		{[]string{"registry", "ls", "--registry", "--json"},
			`airnode: registry ls: --registry: got "--json" as its value: give --registry its value (registry URL) before the next flag (airnode registry ls --help lists its flags)`},
	} {
		r := runCommand(t, 20*time.Second, nil, tc.args[0], tc.args[1:]...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("airnode %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// A value that starts with "-" but is no flag of the command stays a
// value: a negative number, a JSON text, a flag of another command.
func TestFlagValueStartingWithADashThatIsNoFlagIsKept(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr: the command's own check of the value
	}{
		{[]string{"bench", "-n", "-1", "airnode://127.0.0.1:1/demo.Echo"}, "bench: -n -1: want a positive number of calls"},
		{[]string{"call", "--codec", "-x", "airnode://127.0.0.1:1/demo.Echo", "Echo"}, `unknown codec "-x"`},
		{[]string{"call", "--codec", "--calls", "airnode://127.0.0.1:1/demo.Echo", "Echo"}, `unknown codec "--calls"`}, // bench's, not call's
		{[]string{"bench", "--method", "Echo", "--args", "-x", "airnode://127.0.0.1:1/demo.Echo"}, `--args: argument "-x" is not JSON`},
	} {
		r := runCommand(t, 20*time.Second, nil, tc.args[0], tc.args[1:]...)
		if strings.Contains(r.stderr, "as its value") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("airnode %s: exit %d, stderr %q; want the command's own refusal %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// A --registry URL whose key the registry refuses for its value (out of
// range, or not a node name) is a usage error, exit 2, on every command
// taking --registry, worded as the refusal of an unknown key: "airnode:
// CMD: --registry URL: <the registry's words>", with no status
// (tester95 #2: session.timeout=30 was "CLIENT_ERROR: kernel: registry
// ...", exit 1, where sessiontimeout=30s exited 2). A value of the wrong
// form (session.timeout=abc) is named the same way, without the kernel's
// "kernel: registry URL:" repeating the URL.
func TestRegistryURLKeyValueRefusedIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ reg, words string }{
		{"zookeeper://127.0.0.1:38881?session.timeout=30", "zookeeper registry: session.timeout=30ms out of range 400ms..1h0m0s: 30 is 30ms (a bare number is milliseconds, as in Dubbo); write 30s for seconds"},
		{"zookeeper://127.0.0.1:38881?connect.timeout=2h", "zookeeper registry: connect.timeout=2h0m0s out of range 10ms..1m0s"},
		{"zookeeper://127.0.0.1:38881?root=a/b", `zookeeper registry: root="a/b" must be one node name`},
		{"zookeeper://127.0.0.1:38881?session.timeout=abc", `zookeeper registry: invalid value "abc" for URL key "session.timeout": want a duration`},
		{"zookeeper://127.0.0.1:38881?sessiontimeout=30s", `zookeeper registry: unknown URL key "sessiontimeout"`},
		{"file://" + dir + "?poll=1", "file registry: poll=1ms out of range 10ms..1m0s: 1 is 1ms"},
	} {
		for _, args := range [][]string{
			{"call", "--registry", tc.reg, "demo.Echo", "Echo", `"a"`},
			{"bench", "--registry", tc.reg, "demo.Echo", "-n", "1"},
			{"serve", "--registry", tc.reg, "--listen", "127.0.0.1:38882"},
			{"list", "--registry", tc.reg, "--explain", "demo.Echo"},
			{"registry", "ls", "--registry", tc.reg},
			{"registry", "watch", "--registry", tc.reg, "demo.Echo"},
		} {
			path := args[0]
			if path == "registry" {
				path += " " + args[1]
			}
			r := runCommand(t, 20*time.Second, nil, args[0], args[1:]...)
			want := "airnode: " + path + ": --registry " + tc.reg + ": " + tc.words
			if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("airnode %s: exit %d, stderr %q; want exit 2 and one line starting %q", strings.Join(args, " "), r.code, r.stderr, want)
			}
		}
	}
}

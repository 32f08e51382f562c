package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tester88 #4: `airnode plugin list` said only `unknown command "list"
// (available: check)`: it now says that `airnode list` lists the
// plugins. And a URL naming an unknown loadbalance, filter or registry
// (a plugin's name, most likely) in a command that read no configuration
// file says so, and where it looked, after the available names; not when
// a file was read, nor when a close name is suggested, nor for a point no
// plugin serves (codec).
func TestFixbmPluginListAndNoConfigHints(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runBin(t, dir, "plugin", "list")
	want := `airnode: plugin: unknown command "list" (available: check); ` + "`airnode list`" + ` lists the plugins plugins.yaml declares, with their state, after the extension points` + "\n"
	if code != exitUsage || out != "" || errOut != want {
		t.Fatalf("plugin list: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
	hint := "; no configuration file was read (no --config, and no " + filepath.Join(dir, "plugins.yaml") + "), so no plugin is declared: name the file that declares it with --config FILE"
	const url = "airnode://127.0.0.1:35002/demo.Echo"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", url + "?loadbalance=acme.p2c", "Echo", `"x"`},
			`airnode: call: SERVICE_URL key loadbalance=acme.p2c: service demo.Echo: unknown loadbalance "acme.p2c" (available: consistenthash, leastactive, p2c, random, roundrobin, shortestresponse)` + hint + "\n"},
		{[]string{"call", url + "?filter=acme.auth", "Echo", `"x"`}, `unknown filter "acme.auth" (available: `},
		{[]string{"call", "--registry", "acme.reg:///x", "demo.Echo", "Echo"}, `unknown registry "acme.reg" (available: direct, file, memory, zookeeper)` + hint + "\n"},
		{[]string{"list", "loadbalance", "acme.p2c"},
			`airnode: list: unknown loadbalance "acme.p2c" (available: consistenthash, leastactive, p2c, random, roundrobin, shortestresponse)` + hint + "\n"},
	} {
		code, _, errOut := runBin(t, dir, tc.args...)
		want := 1
		if strings.Contains(tc.args[1], "?") || tc.args[1] == "--registry" { // a value of SERVICE_URL's query (fix-bs) or --registry's scheme (fix-cj): a usage error
			want = exitUsage
		}
		if code != want || !strings.Contains(errOut, tc.want) || !strings.HasSuffix(errOut, hint+"\n") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q ending %q", tc.args, code, errOut, want, tc.want, hint)
		}
	}
	for _, args := range [][]string{
		{"call", url + "?loadbalance=rundrobin", "Echo"}, // did you mean "roundrobin"?
		{"list", "codec", "acme.x"},                      // no plugin serves a codec
	} {
		want := 1
		if args[0] == "call" { // a value of SERVICE_URL's query: a usage error (fix-bs)
			want = exitUsage
		}
		if code, _, errOut := runBin(t, dir, args...); code != want || strings.Contains(errOut, "no configuration file") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, no hint", args, code, errOut, want)
		}
	}
	// a configuration file was read: no hint
	if err := os.WriteFile(filepath.Join(dir, "plugins.yaml"), []byte("listen: 127.0.0.1:35003\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runBin(t, dir, "call", url+"?loadbalance=acme.p2c", "Echo"); code != exitUsage ||
		!strings.Contains(errOut, `unknown loadbalance "acme.p2c"`) || strings.Contains(errOut, "no configuration file") {
		t.Errorf("with plugins.yaml: exit %d, stderr %q; want exit 2 without the hint", code, errOut)
	}
}

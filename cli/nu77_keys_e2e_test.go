package cli

import (
	"path/filepath"
	"testing"
	"time"
)

// tester nu77 #4, with a real plugin binary declaring an enum key
// (testdata/keyslb, "keyslb.mode" normal|panic): a value that is none of
// its values, at service or method level, fails call and list --explain
// as a bundled extension's bad value does, naming the plugin, the key,
// the value and what is allowed; a declared value is taken. They were
// accepted silently.
func TestNu77PluginDeclaredKeyValuesAreChecked(t *testing.T) {
	lb := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/keyslb")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.keyslb, point: loadbalance, command: "+lb+", args: [\"keyslb.mode:enum:normal:normal|panic\"]}\n")
	p := serve(t, "127.0.0.1:0", filepath.Join(t.TempDir(), "reg"))
	base := p.url("demo.Echo") + "?loadbalance=acme.keyslb"

	expectOK(t, call(t, nil, "--config", cfg, base+"&keyslb.mode=panic", "Echo", `"x"`), `"x"`)
	// values of the command line's URL: usage errors naming the key (fix-bs)
	expectUsage(t, call(t, nil, "--config", cfg, base+"&keyslb.mode=bogus", "Echo", `"x"`), "airnode: call: SERVICE_URL key keyslb.mode=bogus: service demo.Echo: ",
		`loadbalance "acme.keyslb": invalid value "bogus" for URL key "keyslb.mode": want one of normal, panic`)
	expectUsage(t, call(t, nil, "--config", cfg, base+"&methods.Echo.keyslb.mode=bogus", "Echo", `"x"`), "airnode: call: SERVICE_URL key methods.Echo.keyslb.mode=bogus: ",
		`loadbalance "acme.keyslb": invalid value "bogus" for URL key "methods.Echo.keyslb.mode": want one of normal, panic`)

	r := runCommand(t, 60*time.Second, nil, "list", "--config", cfg, "--explain", "demo.Echo?loadbalance=acme.keyslb&keyslb.mode=bogus")
	expectUsage(t, r, "airnode: list: --explain URL key keyslb.mode=bogus: ", `loadbalance "acme.keyslb": invalid value "bogus" for URL key "keyslb.mode": want one of normal, panic`)
	r = runCommand(t, 60*time.Second, nil, "list", "--config", cfg, "--explain", "demo.Echo?loadbalance=acme.keyslb&keyslb.mode=normal")
	if r.code != 0 {
		t.Errorf("list --explain of a declared value: exit %d, stderr %q", r.code, r.stderr)
	}
}

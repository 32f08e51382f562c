package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// acmePlugin builds sdk/pluginrpc's test plugin: filter "acme.authz"
// (activated by authz.key; Build refuses a non-integer authz.rate and
// never returns with authz.build=hang) and registry "acme.dirreg"
// (read-only with R_MODE=readonly).
func acmePlugin(t *testing.T) string {
	return buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/acmeplug")
}

// refusedBeforeListening checks that serve exited 1 with want on stderr,
// having listened on nothing and registered nothing in the file registry
// dir.
func refusedBeforeListening(t *testing.T, r result, want, dir string) {
	t.Helper()
	code := 1
	if strings.HasPrefix(want, "airnode: serve: -p ") { // a key's value -p gave: a usage error (fix-bs)
		code = exitUsage
	}
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, code, want)
	}
	for _, never := range []string{"msg=listening", "msg=exported", "airnode serve: serving"} {
		if strings.Contains(r.stderr, never) {
			t.Errorf("stderr has %q before the error:\n%s", never, r.stderr)
		}
	}
	if dir == "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("registry %s holds %s after the refused serve", dir, e.Name())
	}
}

// Tester9 #2: serve with a filter plugin whose Build refuses the URL
// (-p authz.rate=abc) exits before listening (2 since fix-bs: the value
// came from the command line), naming the service, the
// filter, the key and what is allowed, as for a bundled filter's bad key;
// it used to register and answer every call SERVER_ERROR.
func TestServeRefusesAFilterPluginThatCannotBeBuilt(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.authz, point: filter, command: "+acmePlugin(t)+"}\n")
	reg := filepath.Join(t.TempDir(), "reg")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0",
		"--registry", "file://"+reg, "-p", "authz.key=k", "-p", "authz.rate=abc")
	refusedBeforeListening(t, r, `airnode: serve: -p authz.rate=abc: service demo.Echo: filter "acme.authz": invalid value "abc" for URL key "authz.rate": want an integer`, reg)
}

// Tester9 #2: a filter plugin whose Build never returns fails serve
// after the Build bound (3 s), naming the filter and the bound; it used
// to serve, every call timing out with nothing in the provider's log.
func TestServeRefusesAFilterPluginWhoseBuildHangs(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.authz, point: filter, command: "+acmePlugin(t)+"}\n")
	reg := filepath.Join(t.TempDir(), "reg")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0",
		"--registry", "file://"+reg, "-p", "authz.key=k", "-p", "authz.build=hang")
	refusedBeforeListening(t, r, `airnode: serve: service demo.Echo: filter "acme.authz": the plugin did not answer Build within 3s`, reg)
}

// A filter plugin built at start still filters every call: a call
// without the x-auth attachment is refused by the plugin, one with it
// passes.
func TestServeWithAFilterPluginFiltersCalls(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.authz, point: filter, command: "+acmePlugin(t)+"}\n")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir(),
		"--config", cfg, "-p", "authz.key=k", "-p", "authz.rate=5")
	if r := call(t, noAirnodeEnv, p.url("demo.Echo"), "Echo", `"x"`); r.code == 0 || !strings.Contains(r.stderr, "BAD_REQUEST: acme.authz: bad x-auth") {
		t.Errorf("call without x-auth: exit %d, stderr %q; want BAD_REQUEST from the filter", r.code, r.stderr)
	}
	expectOK(t, call(t, noAirnodeEnv, "-a", "x-auth=k", p.url("demo.Echo"), "Echo", `"x"`), `"x"`)
}

// Tester9 #10: a registry plugin that says it is read-only
// (spi.ReadOnlyRegistry) is refused before serve listens, as a "read-only
// registry", though its Unregister of a URL it never registered succeeds
// (so the withdraw dry-run alone cannot tell).
func TestServeRefusesAReadOnlyRegistryPluginBeforeListening(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.dirreg, point: registry, command: "+acmePlugin(t)+", env: {R_MODE: readonly}}\n")
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0",
		"--registry", "acme.dirreg:///x", "--shutdown-wait", "5s")
	refusedBeforeListening(t, r, "airnode: serve: --registry acme.dirreg:///x is a read-only registry", "")
	if r.elapsed >= 4*time.Second {
		t.Errorf("serve failed after %v: it waited its 5 s shutdown wait", r.elapsed)
	}
}

// Tester9 #2, consumer side: a filter plugin selected by the reference's
// filter= whose Build refuses the URL fails the call at refer, naming the
// service, the filter and the key, before anything is dialled.
func TestCallRefusesAConsumerFilterPluginThatCannotBeBuilt(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.authz, point: filter, command: "+acmePlugin(t)+"}\n")
	r := call(t, noAirnodeEnv, "--config", cfg, "airnode://127.0.0.1:1/demo.Echo?filter=acme.authz&authz.rate=abc", "Echo", `"x"`)
	// the value came from SERVICE_URL's query: a usage error naming it (fix-bs)
	want := `airnode: call: SERVICE_URL key authz.rate=abc: service demo.Echo: filter "acme.authz": invalid value "abc" for URL key "authz.rate": want an integer`
	if r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, want)
	}
}

// nu48 F8: a filter plugin activated on both sides (moody) whose Build
// never returns costs serve one Build bound (3 s), as documented, not two:
// serve's check before listening built the consumer's chain too and
// waited 3 s for it in vain (6.1 s measured).
func TestServeWaitsOneBuildBoundForAHangingTwoSidedFilterPlugin(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.moody, point: filter, command: "+moody+", env: {F_BUILD: hang}}\n")
	reg := filepath.Join(t.TempDir(), "reg")
	start := time.Now()
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--registry", "file://"+reg)
	took := time.Since(start)
	refusedBeforeListening(t, r, `airnode: serve: service demo.Echo: filter "acme.moody": the plugin did not answer Build within 3s`, reg)
	if took > 5500*time.Millisecond {
		t.Errorf("serve took %v to fail; want one 3 s Build bound (plus the plugin's start and stop), not two", took.Round(time.Millisecond))
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester37 F10: list --explain shows the "publish" row (what serve with
// this configuration would publish) only where the rows describe that
// serve's provider: a service key whose registry lists none. A direct
// URL names its provider, so the row would describe an unrelated serve.
func TestRD1_ExplainPublishRowOnlyForServe(t *testing.T) {
	env := append([]string{"XDG_RUNTIME_DIR=" + t.TempDir()}, noAirnodeEnv...)
	r := runCommand(t, 20*time.Second, env, "list", "--explain", "airnode://127.0.0.1:37001/demo.Echo")
	if r.code != 0 || strings.Contains(r.stdout, "publish ") || !strings.Contains(r.stdout, "url      airnode://127.0.0.1:37001/demo.Echo") {
		t.Errorf("direct URL: exit %d, want no publish row:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCommand(t, 20*time.Second, append(env, "AIRNODE_LISTEN=127.0.0.1:37002"), "list", "--explain", "demo.Echo")
	if want := "publish    127.0.0.1:37002 (serve listens on 127.0.0.1:37002 and publishes this"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("service key, no provider listed: exit %d, want %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// tester37 F10: a URL naming an unknown balancer gets its error, with
// the close match, without the table (some 70 lines on stdout before),
// and exit 2: the URL of the command line names it (fix-bs).
func TestRD1_ExplainUnknownExtensionPrintsOnlyTheError(t *testing.T) {
	for _, u := range []string{
		"airnode://127.0.0.1:37001/demo.Echo?loadbalance=roundrobn",
		"airnode://127.0.0.1:37001/demo.Echo?filter=tokn",
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--explain", u)
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "airnode: list: --explain URL key ") || !strings.Contains(r.stderr, ": unknown ") || !strings.Contains(r.stderr, "did you mean") {
			t.Errorf("%s: exit %d, stdout %d lines, stderr %q; want exit 2, no table, the error naming the key with its did-you-mean",
				u, r.code, strings.Count(r.stdout, "\n"), r.stderr)
		}
	}
	// A known one still gets the table.
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--explain", "airnode://127.0.0.1:37001/demo.Echo?loadbalance=roundrobin")
	if r.code != 0 || !strings.Contains(r.stdout, "POINT") {
		t.Errorf("loadbalance=roundrobin: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
}

// tester37 F11: call's and bench's errors show the default file registry
// as serve's serving line and registry ls do, "file:// (DIR)".
func TestRD1_DefaultRegistryShownAlikeByBench(t *testing.T) {
	runtime := t.TempDir()
	dir := filepath.Join(runtime, "airnode", "registry")
	env := append([]string{"XDG_RUNTIME_DIR=" + runtime}, noAirnodeEnv...)
	want := "(registry: file:// (" + dir + "))"
	if r := call(t, env, "demo.Nope", "Echo", "1"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("call: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if r := runCommand(t, 30*time.Second, env, "bench", "-n", "1", "demo.Nope"); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("bench: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	// An explicit registry URL is shown as given.
	other := t.TempDir()
	if r := call(t, env, "--registry", "file://"+other, "demo.Nope", "Echo", "1"); r.code != 1 || !strings.Contains(r.stderr, "(registry: file://"+other+")") {
		t.Errorf("call --registry: exit %d, stderr %q", r.code, r.stderr)
	}
}

// tester37 F12: -p refuses a key given twice naming both flags, as -a
// does, in serve, call and bench, as a usage error (exit 2; nu54 finding 3).
func TestRD1_ParamGivenTwiceNamesBothFlags(t *testing.T) {
	const want = `-p "a=1" and -p "a=2": key "a" given twice: give each key once`
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--registry", "memory://rd1", "-p", "a=1", "-p", "a=2"},
		{"call", "-p", "a=1", "-p", "a=2", "airnode://127.0.0.1:37001/demo.Echo", "Echo", "1"},
		{"bench", "-p", "a=1", "-p", "a=2", "-n", "1", "airnode://127.0.0.1:37001/demo.Echo"},
	} {
		r := runCommand(t, 20*time.Second, noAirnodeEnv, args[0], args[1:]...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 (a usage error) and %q", args, r.code, r.stderr, want)
		}
	}
}

// tester37 F16: JSON output writes & < > as they are, not as Go's
// HTML-safe \u0026: registry ls --json of a provider whose URL has
// several keys.
func TestRD1_JSONOutputDoesNotEscapeHTML(t *testing.T) {
	reg := t.TempDir()
	serve(t, "127.0.0.1:0", reg, "-p", "weight=50")
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--json", "--registry", "file://"+reg)
	if r.code != 0 || !strings.Contains(r.stdout, `"url": "airnode://`) || !strings.Contains(r.stdout, "&weight=50") || strings.Contains(r.stdout, `\u00`) {
		t.Errorf("registry ls --json: exit %d, stderr %q; want & unescaped:\n%s", r.code, r.stderr, r.stdout)
	}
}

package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tester88 #1: `airnode plugin check` of a real filter plugin that returns
// next's result with a response attachment added (what sdk/README calls
// fine) passes once --filter-adds-response-attachment declares the keys;
// declared as --filter-adds-attachment (tester88's try) it fails
// PassThrough naming the flag that declares it and saying what
// --filter-adds-attachment declares; a filter that also replaces the
// value still fails with the keys declared.
func TestPluginCheckAcceptsDeclaredResponseAttachments(t *testing.T) {
	t.Parallel()
	fp := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	check := func(args ...string) result {
		return runCommand(t, 120*time.Second, noAirnodeEnv, "plugin", append([]string{"check", fp}, args...)...)
	}
	declared := []string{"--filter-adds-response-attachment", "x-stamp.consumer", "--filter-adds-response-attachment", "x-stamp.provider"}
	if r := check(append([]string{"--arg", "stamp"}, declared...)...); r.code != 0 || !strings.Contains(r.stdout, "--- PASS: Conformance/filter/provider/PassThrough ") || !strings.Contains(r.stdout, "result       ok") {
		t.Errorf("stamp with --filter-adds-response-attachment: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r := check("--arg", "stamp", "--filter-adds-attachment", "x-stamp.consumer", "--filter-adds-attachment", "x-stamp.provider")
	for _, want := range []string{"--- FAIL: Conformance/filter/consumer/PassThrough ", `it added "x-stamp.consumer"`,
		"FilterOptions.AddsResponseAttachments (airnode plugin check --filter-adds-response-attachment KEY)",
		"(--filter-adds-attachment) declares the attachments of the invocation it passes to next, not of the result"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stamp with --filter-adds-attachment: output lacks %q", want)
		}
	}
	if r.code == 0 || t.Failed() {
		t.Errorf("stamp with --filter-adds-attachment: exit %d; want a failure naming the flag\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = check(append([]string{"--arg", "stampvalue"}, declared...)...)
	if r.code == 0 || !strings.Contains(r.stdout, "--- FAIL: Conformance/filter/consumer/PassThrough ") || !strings.Contains(r.stdout, `want next's result unchanged: value "pong"`) {
		t.Errorf("stampvalue with the keys declared: exit %d; want PassThrough failed\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// tester88 #2: a filter plugin whose activation names a key but no side
// (Activation{Key: "pass.on"}) is activated on no side, so a URL with the
// key does not use it. Every place says so: plugin check warns (and
// still runs the suite on both sides), list warns once at start naming
// the plugin and the fix, its NOTES say the key activates it on no side,
// and list --explain says why it is not in either chain; serve -p
// pass.on=1 warns once at start. Each said nothing.
func TestFilterPluginWithAKeyButNoSideIsSaidToBeUnused(t *testing.T) {
	t.Parallel()
	fp := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	r := runCommand(t, 120*time.Second, noAirnodeEnv, "plugin", "check", fp, "--arg", "nosides", "--filter-param", "pass.on=1")
	if want := `warning   filter "passfilter" declares the activation key "pass.on" but no side (Activation.Sides is empty): the kernel activates it on no side, so pass.on=VALUE puts it in no chain and only a URL whose filter key names it (filter=passfilter) uses it; for "pass.on" to activate it, its author sets Activation.Sides`; r.code != 0 || !strings.Contains(r.stdout, want) ||
		!strings.Contains(r.stdout, "--- PASS: Conformance/filter/consumer ") || !strings.Contains(r.stdout, "--- PASS: Conformance/filter/provider ") {
		t.Errorf("plugin check: exit %d; want 0, %q, the suite on both sides\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}

	reg := "file://" + filepath.Join(t.TempDir(), "reg") // no provider: list --explain shows what serve would publish
	cfg := writeConfig(t, "registry: "+reg+"\nplugins:\n  - {name: acme.pass, point: filter, command: "+fp+", args: [nosides]}\n")
	const warning = `warning: filter plugin's activation names a key but no side: it is in no chain unless a URL's filter key names it plugin=acme.pass err="filter \"acme.pass\" declares the activation key \"pass.on\" but no side`
	r = runCommand(t, 60*time.Second, noAirnodeEnv, "list", "--config", cfg, "--explain", "demo.Echo?pass.on=1")
	if r.code != 0 || strings.Count(r.stderr, warning) != 1 || !strings.Contains(r.stderr, "its author sets Activation.Sides") {
		t.Errorf("list --explain: exit %d; want 0 and one warning %q\nstderr:\n%s", r.code, warning, r.stderr)
	}
	const why = "(acme.pass is not in the chain: key pass.on=1 does not activate it, its activation names no side (Activation.Sides is empty); filter=acme.pass puts it in)"
	if n := strings.Count(r.stdout, why); n != 2 {
		t.Errorf("list --explain: %d rows %q, want 2 (consumer and provider)\n%s", n, why, r.stdout)
	}
	r = runCommand(t, 60*time.Second, noAirnodeEnv, "list", "--config", cfg)
	if want := `only when listed in filter= (key "pass.on" activates it on no side: its activation names none)`; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("list: exit %d; want NOTES %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}

	p := startServe(t, "127.0.0.1:0", reg, noAirnodeEnv, t.TempDir(), "--config", cfg, "-p", "pass.on=1")
	if n := strings.Count(p.logText(), "warning: filter plugin's activation names a key but no side"); n != 1 || !strings.Contains(p.logText(), "plugin=acme.pass") {
		t.Errorf("serve: %d warnings of the sideless filter, want 1 naming acme.pass\n%s", n, p.logText())
	}
}

// tester88 #3, with the real binary: a provider filter plugin slower than
// the call's timeout (filterplugin "slow" sleeps 3 s, not watching its
// ctx; through Chain) ends `airnode call --timeout 1s` SERVER_TIMEOUT
// from the provider, naming the filter and that the method was not
// called, before the consumer's own timer: every time, not one call in
// ten. It read "SERVER_TIMEOUT: exchange: call demo.Echo.Echo ... timed
// out after 1.001s waiting for the response", the filter named only in
// serve's log.
func TestProviderFilterPluginSlowerThanTheTimeoutIsNamedToTheConsumer(t *testing.T) {
	t.Parallel()
	fp := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/filterplugin")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.slow, point: filter, command: "+fp+", args: [slow]}\n")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir(), "--config", cfg)
	// --timeout is the call's own timeout, counted from the call's start:
	// the request carries what is left of it when it is sent (1s, or a
	// little less after connecting)
	want := regexp.MustCompile(`^SERVER_TIMEOUT: exchange: call demo\.Echo\.Echo timed out after (1s|\d{3}ms) on the provider \(filter "acme\.slow" ran until 50ms before the consumer's deadline, when the provider gave up on it so that this answer reaches the consumer before its own timer; the method was not called\)`)
	for i := range 3 {
		r := call(t, noAirnodeEnv, "--timeout", "1s", p.url("demo.Echo"), "Echo", `"x"`)
		if r.code != 1 || !want.MatchString(r.stderr) {
			t.Fatalf("call %d: exit %d, stderr %q; want %q", i, r.code, r.stderr, want)
		}
	}
}

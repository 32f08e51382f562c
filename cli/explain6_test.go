package cli

import (
	"time"

	"github.com/airnode/airnode/kernel/config"
	"strings"
	"testing"
)

// list --explain fails a consumer key that call refuses at Refer with
// call's own error (kernel.CheckConsumerKeys, after call's "kernel: refer
// <service>: "), among them connections, which config.CheckURL does not
// cover: out of bounds (100, 0) and not a number (abc). The reference's
// own key is not blamed on a config file. A value of the URL's query that
// the kernel refuses (connections=abc or =100, a *spi.ParamError) is a
// usage error of both, naming the key as given (fix-bs, fix-cc).
func TestListExplainRunsRefersChecks(t *testing.T) {
	for _, q := range []string{"connections=100", "connections=abc", "connections=0", "Sleep.timeout=1s&methods.Sleep.timeout=2s"} {
		u := "airnode://127.0.0.1:1/demo.Echo?" + q
		code, out, errOut := airnode(t, nil, "list", "--explain", u)
		ccode, _, cerr := airnode(t, nil, "call", u, "Echo", "1")
		if v, ok := strings.CutPrefix(q, "connections="); ok {
			msg := `SERVICE_URL key ` + q + `: service demo.Echo: invalid value "` + v + `" for URL key "connections": want an integer from 1 to 64`
			if ccode != exitUsage || strings.TrimSpace(cerr) != "airnode: call: "+msg {
				t.Fatalf("%s: call exit %d, stderr %q; want exit 2 and %q", q, ccode, cerr, msg)
			}
			if want := "airnode: list: --explain URL key" + strings.TrimPrefix(msg, "SERVICE_URL key"); code != exitUsage || strings.TrimSpace(errOut) != want {
				t.Errorf("%s: list --explain exit %d, stderr %q; want exit 2 and %q\n%s", q, code, errOut, want, out)
			}
			continue
		}
		_, msg, ok := strings.Cut(strings.TrimSpace(cerr), "kernel: refer demo.Echo: ")
		if ccode != 1 || !ok {
			t.Fatalf("%s: call exit %d, stderr %q; want exit 1 and the kernel's refusal", q, ccode, cerr)
		}
		if code != 1 || strings.TrimSpace(errOut) != "airnode: list: "+msg {
			t.Errorf("%s: list --explain exit %d, stderr %q; want exit 1 and call's error %q\n%s", q, code, errOut, msg, out)
		}
	}
	for _, q := range []string{"connections=64", "connections=1"} {
		if code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?"+q); code != 0 || !row("connections", "service", strings.TrimPrefix(q, "connections="), "SERVICE_URL query (connections)").MatchString(out) {
			t.Errorf("%s: exit %d, stderr %q\n%s", q, code, errOut, out)
		}
	}
	// One error for one key, however many checks find it; both keys are
	// the URL's: a usage error (fix-bs).
	code, _, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?timeout=abc&connections=100")
	if code != exitUsage || strings.Count(errOut, `"timeout"`) != 1 || strings.Count(errOut, "connections=100") > 1 {
		t.Errorf("timeout=abc: exit %d, stderr %q", code, errOut)
	}
	// A service key (registry): the reference's key from the config's
	// references is the consumer's, not the provider config's.
	cfg := writeConfig(t, "references: [{interface: demo.Echo, params: {connections: \"65\"}}]\n")
	code, _, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if want := `airnode: list: invalid value "65" for URL key "connections": want an integer from 1 to 64`; code != 1 || strings.TrimSpace(errOut) != want {
		t.Errorf("reference connections=65: exit %d, stderr %q; want exit 1 and %q", code, errOut, want)
	}
}

// With a provider in the registry, list --explain of a service key
// merges the provider's URL as published (the providers row names it)
// and warns, as Refer does, of a method-level key naming a method the
// provider's methods= lacks (exit 0: the consumer ignores it); a
// misspelt key of a method gets the key meant in the form written.
// Per-method rows are only for the methods the consumer's keys name.
func TestListExplainWarnsOfMethodKeysOfNoMethod(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, "registry: file://"+dir+"\n")
	// No provider yet: the configuration's provider side, said so.
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?methods.Slep.timeout=100ms")
	if code != 0 || !strings.Contains(out, "providers  none now in file://"+dir+": the provider side below is what serve with this configuration would publish") ||
		strings.Contains(errOut, "no method Slep") {
		t.Fatalf("no provider: exit %d, stderr %q\n%s", code, errOut, out)
	}

	p := serve(t, "127.0.0.1:0", dir)
	code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?methods.Slep.timeout=100ms&methods.Sleep.timout=1s")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	for _, w := range []string{
		`airnode: list: warning: URL key "methods.Slep.timeout" sets timeout for method Slep, but service demo.Echo has no method Slep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"? (provider ` + p.addr + "'s methods; the consumer ignores the key)\n",
		`airnode: list: warning: methods.Sleep.timout=1s is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling); did you mean "methods.Sleep.timeout"?` + "\n",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if !row("providers", "1 in file://"+dir+":", p.addr, "(transport", "smux);", "methods", "Echo,", "Fail,", "Info,", "Payload,", "Sleep").MatchString(out) ||
		!row("methods", "Sleep,", "Slep").MatchString(out) || strings.Contains(out, "method Echo") {
		t.Errorf("rows:\n%s", out)
	}
	// Refer warns the same way (the real call), and the key meant is in
	// the form written.
	r := runCommand(t, 20*time.Second, nil, "call", "--registry", "file://"+dir, "demo.Echo?methods.Slep.timeout=100ms&methods.Sleep.timout=1s", "Echo", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "has no method Slep") || !strings.Contains(r.stderr, "did_you_mean=methods.Sleep.timeout") {
		t.Errorf("call: exit %d, stderr %q", r.code, r.stderr)
	}
	// A correct method key: no warning.
	if code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?methods.Sleep.timeout=100ms"); code != 0 || strings.Contains(errOut, "warning") ||
		!row("timeout", "method Sleep", "100ms", "SERVICE_URL query (methods.Sleep.timeout)").MatchString(out) {
		t.Errorf("methods.Sleep.timeout: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// A key call's command line sets (--timeout, -p, SERVICE_URL's query)
// beats the configuration reference's method-level forms of it for the
// method called (flags beat files), against a real provider: with the
// reference's methods.Sleep.timeout: 150ms, Sleep 600 times out alone
// (it would pass the default 1s) and Sleep 1000 succeeds with --timeout
// 2s; a key for another method (Echo.timeout) leaves Sleep's. list --explain shows the same.
func TestCallFlagBeatsReferenceMethodKey(t *testing.T) {
	dir := t.TempDir()
	_ = serve(t, "127.0.0.1:0", dir)
	cfg := writeConfig(t, "registry: file://"+dir+"\nreferences:\n  - interface: demo.Echo\n    params: {methods.Sleep.timeout: 150ms}\n")
	expectFail(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, "demo.Echo", "Sleep", "600"), "", "TIMEOUT", "demo.Echo.Sleep")
	// Sleep 400 is over the reference's 150ms and well under the flag's
	// 5s, however loaded the machine (Sleep 1000 against 2s timed out
	// once in CI at load 13).
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, "demo.Echo", "Sleep", "400", "--timeout", "5s"), "400")
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, "demo.Echo", "Sleep", "400", "-p", "Sleep.timeout=5s"), "400")
	expectFail(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, "demo.Echo?Echo.timeout=2s", "Sleep", "600"), "", "TIMEOUT", "demo.Echo.Sleep")

	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?timeout=2s")
	if code != 0 || strings.Contains(out, "method Sleep") || !row("timeout", "service", "2s", "SERVICE_URL query (timeout)").MatchString(out) {
		t.Errorf("explain timeout=2s: exit %d, stderr %q\n%s", code, errOut, out)
	}
	code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if code != 0 || !row("timeout", "method Sleep", "150ms", "reference (methods.Sleep.timeout)").MatchString(out) {
		t.Errorf("explain: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// consumerURL drops a reference's method-level key only when the command
// line sets that key for the service or that method.
func TestConsumerURLFlagsBeatReferenceMethodKeys(t *testing.T) {
	cfg := config.Config{References: []config.Reference{{Interface: "demo.Echo", Params: map[string]string{
		"methods.Sleep.timeout": "150ms", "Echo.retries": "5", "methods.Sleep.loadbalance": "roundrobin", "actives": "3"}}}}
	for _, tc := range []struct {
		arg   string
		p     []string
		flags []flagParam
		want  string
	}{
		{"demo.Echo", nil, nil, "airnode:///demo.Echo?Echo.retries=5&actives=3&methods.Sleep.loadbalance=roundrobin&methods.Sleep.timeout=150ms"},
		{"demo.Echo", nil, []flagParam{{"--timeout", "2s", "timeout", "2s"}}, "airnode:///demo.Echo?Echo.retries=5&actives=3&methods.Sleep.loadbalance=roundrobin&timeout=2s"},
		{"demo.Echo?retries=1", []string{"methods.Sleep.loadbalance=random"}, nil, "airnode:///demo.Echo?actives=3&methods.Sleep.loadbalance=random&methods.Sleep.timeout=150ms&retries=1"},
		{"demo.Echo?Echo.timeout=1s", []string{"actives=1"}, nil, "airnode:///demo.Echo?Echo.retries=5&Echo.timeout=1s&actives=1&methods.Sleep.loadbalance=roundrobin&methods.Sleep.timeout=150ms"},
	} {
		u, err := consumerURL(cfg, tc.arg, tc.p, tc.flags)
		if err != nil || u.String() != tc.want {
			t.Errorf("%s %v %v: %v, %v; want %s", tc.arg, tc.p, tc.flags, u, err, tc.want)
		}
	}
}

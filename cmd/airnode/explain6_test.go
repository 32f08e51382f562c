package main

import (
	"strings"
	"testing"
)

// list --explain fails a consumer key that call refuses at Refer with
// call's own error (kernel.CheckConsumerKeys, after call's "kernel: refer
// <service>: "), among them connections, which config.CheckURL does not
// cover: out of bounds (100) and not a number (abc). The reference's own
// key is not blamed on a config file.
func TestListExplainRunsRefersChecks(t *testing.T) {
	for _, q := range []string{"connections=100", "connections=abc", "connections=0", "Sleep.timeout=1s&methods.Sleep.timeout=2s"} {
		u := "airnode://127.0.0.1:1/demo.Echo?" + q
		code, out, errOut := airnode(t, nil, "list", "--explain", u)
		ccode, _, cerr := airnode(t, nil, "call", u, "Echo", "1")
		_, msg, ok := strings.Cut(strings.TrimSpace(cerr), "kernel: refer demo.Echo: ")
		if ccode != 1 || !ok {
			t.Fatalf("%s: call exit %d, stderr %q; want exit 1 and the kernel's refusal", q, ccode, cerr)
		}
		if code != 1 || strings.TrimSpace(errOut) != "airnode: "+msg {
			t.Errorf("%s: list --explain exit %d, stderr %q; want exit 1 and call's error %q\n%s", q, code, errOut, msg, out)
		}
	}
	for _, q := range []string{"connections=64", "connections=1"} {
		if code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?"+q); code != 0 || !row("connections", "service", strings.TrimPrefix(q, "connections="), "key connections").MatchString(out) {
			t.Errorf("%s: exit %d, stderr %q\n%s", q, code, errOut, out)
		}
	}
	// One error for one key, however many checks find it.
	code, _, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?timeout=abc&connections=100")
	if code != 1 || strings.Count(errOut, `"timeout"`) != 1 || strings.Count(errOut, "connections=100") > 1 {
		t.Errorf("timeout=abc: exit %d, stderr %q", code, errOut)
	}
	// A service key (registry): the reference's key from the config's
	// references is the consumer's, not the provider config's.
	cfg := writeConfig(t, "references: [{interface: demo.Echo, params: {connections: \"65\"}}]\n")
	code, _, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if code != 1 || strings.TrimSpace(errOut) != "airnode: connections=65: want 1 to 64" {
		t.Errorf("reference connections=65: exit %d, stderr %q", code, errOut)
	}
}

package cli

import (
	"strings"
	"testing"
)

// call --timeout replaces a consumer: section's timeout, or
// AIRNODE_CONSUMER_TIMEOUT's, when the reference sets none, and says so
// naming the source, as it does for the reference's own timeout; and a
// consumer: section naming an unknown extension is refused with the
// catalog's did-you-mean, as a reference's params are.
func TestBB_TimeoutFlagReplacingConsumerDefaultSaysSo(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "warmup=0")
	env := []string{"AIRNODE_REGISTRY=" + p.reg}
	cfg := writeConfig(t, "consumer: {timeout: 2s}\n")
	r := call(t, env, "--config", cfg, "--timeout", "3s", "demo.Echo", "Echo", `"x"`)
	if want := "airnode: call: warning: --timeout 3s replaces the configuration's consumer.timeout=2s (flags beat files)\n"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("consumer: {timeout: 2s}: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	r = call(t, append(env, "AIRNODE_CONSUMER_TIMEOUT=1500ms"), "--config", cfg, "--timeout", "3s", "demo.Echo", "Echo", `"x"`)
	// the variable's value as written (config.Load keeps it: fix-ct)
	if want := "airnode: call: warning: --timeout 3s replaces AIRNODE_CONSUMER_TIMEOUT=1500ms (flags beat the environment)\n"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("AIRNODE_CONSUMER_TIMEOUT=1500ms: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	// the reference's timeout ranks above consumer:'s: only it is named
	ref := writeConfig(t, "consumer: {timeout: 2s}\nreferences:\n  - {interface: demo.Echo, params: {timeout: 1s}}\n")
	r = call(t, env, "--config", ref, "--timeout", "3s", "demo.Echo", "Echo", `"x"`)
	if r.code != 0 || !strings.Contains(r.stderr, "replaces the configuration's timeout=1s") || strings.Contains(r.stderr, "consumer.timeout") {
		t.Errorf("reference and consumer timeouts: exit %d, stderr %q; want the reference's warning only", r.code, r.stderr)
	}
	r = call(t, env, "--config", cfg, "--timeout", "2000ms", "demo.Echo", "Echo", `"x"`)
	if r.code != 0 || strings.Contains(r.stderr, "replaces") {
		t.Errorf("--timeout equal to consumer.timeout: exit %d, stderr %q; want no warning", r.code, r.stderr)
	}

	bad := writeConfig(t, "consumer: {loadbalance: roundrobn}\n")
	expectFail(t, call(t, env, "--config", bad, "demo.Echo", "Echo", `"x"`), "",
		`key "consumer": unknown loadbalance "roundrobn"`, `did you mean "roundrobin"?`)
	expectFail(t, call(t, append(env, "AIRNODE_CONSUMER_CLUSTER=failovr"), "--config", cfg, "demo.Echo", "Echo", `"x"`), "",
		`config: environment AIRNODE_CONSUMER_CLUSTER: unknown cluster "failovr"`, `did you mean "failover"?`)
}

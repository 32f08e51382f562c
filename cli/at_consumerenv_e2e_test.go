package cli

import (
	"strings"
	"testing"
	"time"
)

// tester79 #3: no environment variable set a consumer's defaults
// (timeout, retries, retry.tokens...), so a 12-factor deployment had to
// template the YAML. AIRNODE_CONSUMER_<KEY> sets a URL key of every
// reference (the key found through the key catalog: RETRY_TOKENS is
// failover's retry.tokens) over the file's consumer: section; a
// reference's params and -p win over it. AIRNODE_PROVIDER_<KEY> does the
// same for every export (protocol:). A misspelt one is warned about with
// a did-you-mean.
func TestAT_ConsumerAndProviderEnvironment(t *testing.T) {
	p := startServe(t, "127.0.0.1:0", "memory://", []string{"AIRNODE_PROVIDER_WEIGHT=7"}, "")
	direct := p.url("demo.Echo")
	const slow = "600" // Sleep 600 ms

	r := call(t, []string{"AIRNODE_CONSUMER_TIMEOUT=200ms"}, direct, "Sleep", slow)
	expectFail(t, r, "SERVER_TIMEOUT", "timed out after 2")

	// environment over the file's consumer: section
	cfg := writeConfig(t, "consumer: {timeout: 5s}\n")
	r = call(t, []string{"AIRNODE_CONSUMER_TIMEOUT=200ms"}, "--config", cfg, direct, "Sleep", slow)
	expectFail(t, r, "SERVER_TIMEOUT", "timed out after 2")
	// the file's consumer: section alone applies
	cfg = writeConfig(t, "consumer: {timeout: 200ms}\n")
	r = call(t, nil, "--config", cfg, direct, "Sleep", slow)
	expectFail(t, r, "SERVER_TIMEOUT", "timed out after 2")

	// a reference's params and -p over the environment
	cfg = writeConfig(t, "references: [{interface: demo.Echo, params: {timeout: 3s}}]\n")
	r = call(t, []string{"AIRNODE_CONSUMER_TIMEOUT=200ms"}, "--config", cfg, direct, "Sleep", slow)
	expectOK(t, r, slow)
	r = call(t, []string{"AIRNODE_CONSUMER_TIMEOUT=200ms"}, "-p", "timeout=3s", direct, "Sleep", slow)
	expectOK(t, r, slow)

	// values checked as the file's, naming the variable; an extension's key
	// (failover's retry.tokens) is found through the catalog
	r = call(t, []string{"AIRNODE_CONSUMER_TIMEOUT=5x"}, direct, "Echo", "1")
	expectFail(t, r, `airnode: call: config: environment AIRNODE_CONSUMER_TIMEOUT: invalid value "5x" for URL key "timeout"`)
	r = call(t, []string{"AIRNODE_CONSUMER_RETRY_TOKENS=5000"}, direct, "Echo", "1")
	expectFail(t, r, "airnode: call: config: environment AIRNODE_CONSUMER_RETRY_TOKENS: ", `invalid value "5000" for URL key "retry.tokens"`)
	r = runCommand(t, 60*time.Second, []string{"AIRNODE_CONSUMER_RETRY_TOKENS=10"}, "bench", direct, "-n", "20")
	if r.code != 0 || strings.Contains(r.stderr, "environment variables") {
		t.Errorf("bench with AIRNODE_CONSUMER_RETRY_TOKENS=10: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// a misspelt one: a warning with its did-you-mean, the call goes on
	r = call(t, []string{"AIRNODE_CONSUMER_TIMOUT=200ms"}, direct, "Echo", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "AIRNODE_CONSUMER_TIMOUT: did you mean AIRNODE_CONSUMER_TIMEOUT?") {
		t.Errorf("AIRNODE_CONSUMER_TIMOUT: exit %d, stderr:\n%s\nwant exit 0 and a did-you-mean", r.code, r.stderr)
	}

	// the provider's environment set weight on its export
	r = call(t, nil, direct, "Info")
	if r.code != 0 || !strings.Contains(r.stdout, `"weight":7`) {
		t.Errorf("Info of a provider with AIRNODE_PROVIDER_WEIGHT=7: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
}

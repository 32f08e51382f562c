package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tester66 F1: a consumer filter plugin's round trip takes the call's
// timeout (--timeout, -p timeout=, the URL's timeout key), not the 1 s
// bound of a call without one: a filter that sleeps 1.6 s passes a call
// with a 5 s timeout (it was cut at 1 s, CLIENT_ERROR "plugin filter
// Invoke: context deadline exceeded"), and one that never returns ends
// the call at its timeout with CLIENT_TIMEOUT naming it.
func TestConsumerFilterPluginTakesTheCallsTimeout(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir())
	// start_timeout 60s: the call waits for its filter plugin's start
	// before its timeout counts; a start past the 10s default on a
	// loaded machine would have the call go on without the filter
	slow := writeConfig(t, "plugins:\n  - {name: acme.moody, point: filter, command: "+moody+", start_timeout: 60s, env: {F_MODE: slow, SLOW_MS: \"1600\"}}\n")
	for _, args := range [][]string{
		{"--timeout", "5s", p.url("demo.Echo")},
		{"-p", "timeout=5s", p.url("demo.Echo")},
		{p.url("demo.Echo") + "?timeout=5000"},
	} {
		r := call(t, noAirnodeEnv, append(append([]string{"--config", slow}, args...), "Echo", `"slow"`)...)
		expectOK(t, r, `"slow"`)
		if r.elapsed < 1500*time.Millisecond {
			t.Errorf("call %v answered after %v; the filter sleeps 1.6 s", args, r.elapsed)
		}
	}
	stuck := writeConfig(t, "plugins:\n  - {name: acme.moody, point: filter, command: "+moody+", start_timeout: 60s, env: {F_MODE: stuck}}\n")
	r := call(t, noAirnodeEnv, "--config", stuck, "--timeout", "2500ms", p.url("demo.Echo"), "Echo", `"hang"`)
	// the call's context ends with --timeout (tester71 #2: it bounds the
	// retries too; a URL key timeout is each attempt's, tester74 #4): the
	// filter says the deadline passed, the call names the timeout
	expectFail(t, r, `CLIENT_TIMEOUT: filter "acme.moody": the call's deadline passed while the plugin's filter ran (it had what was left of it); the call went no further; the call's timeout of 2.5s ran out`)
	if r.elapsed < 2400*time.Millisecond {
		t.Errorf("the stuck filter's call ended after %v; want its 2.5 s timeout", r.elapsed)
	}
	if strings.Contains(r.stderr, "context deadline exceeded") {
		t.Errorf("stderr has Go's jargon: %q", r.stderr)
	}
	// a call without a timeout keeps the 1 s bound, now CLIENT_TIMEOUT
	r = call(t, noAirnodeEnv, "--config", stuck, p.url("demo.Echo"), "Echo", `"hang"`)
	expectFail(t, r, `CLIENT_TIMEOUT: filter "acme.moody": the call's deadline passed`, "the call's timeout of 1s ran out")
}

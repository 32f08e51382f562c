package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// nu77 #8, with the real binary: a provider filter plugin that never
// answers (moody, F_MODE=stuck) ends `airnode call` SERVER_TIMEOUT naming
// the filter and saying that the method was not called; never is the
// method said to have run. The provider's answer raced the consumer's own
// timer (it won about one call in ten); since tester88 #3 the provider
// gives up on the filter a little before the consumer's deadline (a
// tenth of it, 29ms of a 300ms call once the request crossed; --timeout
// is the call's own, so the request carries what is left of it), so every
// call gets its answer. The wording itself is checked deterministically
// by kernel/exchange's TestProviderTimeoutInAFilterSaysTheMethodWasNotCalled
// and TestProviderAnswerForAFilterGivenUpEarlyNamesIt, and
// sdk/pluginrpc's TestFilterPluginDeadlineSaysWhetherTheMethodWasCalled.
func TestProviderFilterPluginDeadlineSaysTheMethodWasNotCalled(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.stamp, point: filter, command: "+moody+", env: {F_MODE: stuck}}\n")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir(), "--config", cfg)
	// The request reaches the provider with what is left of the 300 ms:
	// under load its transit took 86 ms once (fix-cl: "after 214ms ...
	// ran until 86ms before"), so the split is not pinned, only that the
	// provider answered, in the call's time, that the method was not called.
	provider := regexp.MustCompile(`^SERVER_TIMEOUT: exchange: call demo\.Echo\.Echo timed out after (300|[12]?\d\d)ms on the provider \(filter "acme\.stamp" ran until (\d|[1-9]\d|1\d\d|2\d\d)ms before the consumer's deadline, when the provider gave up on it so that this answer reaches the consumer before its own timer; the method was not called\)`)
	for i := 0; i < 10; i++ {
		r := call(t, noAirnodeEnv, "--timeout", "300ms", p.url("demo.Echo"), "Echo", `"after"`)
		if r.code != 1 || !provider.MatchString(r.stderr) || strings.Contains(r.stderr, "the method ran") {
			t.Fatalf("call %d: exit %d, stderr %q; want the provider's answer %q", i, r.code, r.stderr, provider)
		}
	}
}

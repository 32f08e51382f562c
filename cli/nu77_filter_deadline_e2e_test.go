package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// nu77 #8, with the real binary: a provider filter plugin that never
// answers (moody, F_MODE=stuck) ends `airnode call` SERVER_TIMEOUT. When
// the provider's answer beats the consumer's own timer (a race: about
// one call in ten here), it names the filter and says that the method was
// not called; it said "the consumer's deadline passed while the method
// ran". Never is the method said to have run. The wording itself is
// checked deterministically by kernel/exchange's
// TestProviderTimeoutInAFilterSaysTheMethodWasNotCalled and
// sdk/pluginrpc's TestFilterPluginDeadlineSaysWhetherTheMethodWasCalled.
func TestProviderFilterPluginDeadlineSaysTheMethodWasNotCalled(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	cfg := writeConfig(t, "plugins:\n  - {name: acme.stamp, point: filter, command: "+moody+", env: {F_MODE: stuck}}\n")
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(t.TempDir(), "reg"), noAirnodeEnv, t.TempDir(), "--config", cfg)
	const provider = `SERVER_TIMEOUT: exchange: call demo.Echo.Echo timed out after 300ms on the provider (the consumer's deadline passed while filter "acme.stamp" ran; the method was not called)`
	answered := 0
	for i := 0; i < 30 && answered == 0; i++ {
		r := call(t, noAirnodeEnv, "--timeout", "300ms", p.url("demo.Echo"), "Echo", `"after"`)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "SERVER_TIMEOUT: ") || strings.Contains(r.stderr, "the method ran") {
			t.Fatalf("call %d: exit %d, stderr %q; want SERVER_TIMEOUT, not saying that the method ran", i, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "on the provider") {
			answered++
			if !strings.HasPrefix(r.stderr, provider) {
				t.Fatalf("call %d: the provider answered %q; want %q", i, r.stderr, provider)
			}
		}
	}
	if answered == 0 {
		t.Logf("the consumer's timer beat the provider's answer in all 30 calls: its wording was not seen here")
	}
}

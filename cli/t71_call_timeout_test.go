package cli

import (
	"strings"
	"testing"
	"time"
)

// tester71 #2: call --timeout bounds the whole command, retries
// included: with idempotent=true and retries=5, --timeout 300ms against a
// method that sleeps 1 s took 1.82 s (six attempts of 300 ms). The call's
// context now ends with the timeout, so failover starts no retry after it.
func TestT71_2_CallTimeoutBoundsRetries(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := call(t, nil, "--timeout", "300ms", "-p", "idempotent=true", "-p", "retries=5", p.url("demo.Echo"), "Sleep", "1000")
	t.Logf("--timeout 300ms, retries=5: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "SERVER_TIMEOUT")
	// the binary's start is part of elapsed: 2x the bound and more
	if r.elapsed > 1500*time.Millisecond {
		t.Errorf("call took %v; want about --timeout 300ms, retries included", r.elapsed)
	}
	// connect.timeout set: --timeout bounds the call and its retries alone
	r = call(t, nil, "--timeout", "300ms", "-p", "connect.timeout=2s", "-p", "idempotent=true", "-p", "retries=5", p.url("demo.Echo"), "Sleep", "1000")
	t.Logf("--timeout 300ms, connect.timeout 2s, retries=5: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "SERVER_TIMEOUT")
	if r.elapsed > 1500*time.Millisecond {
		t.Errorf("call with connect.timeout took %v; want about --timeout 300ms, retries included", r.elapsed)
	}
}

// tester71 #2: the wait for a provider to be listed (2 s) is cut to what
// is left of --timeout, and the error says what was waiting.
func TestT71_2_CallTimeoutBoundsTheWaitForAProvider(t *testing.T) {
	t.Parallel()
	reg := t.TempDir()
	r := call(t, nil, "--registry", "file://"+reg, "--timeout", "300ms", "demo.Nope", "Echo", `"x"`)
	t.Logf("nothing listed, --timeout 300ms: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "SERVICE_NOT_FOUND", "no provider available for demo.Nope",
		"--timeout 300ms ran out while waiting for a provider of demo.Nope to be listed")
	if r.elapsed > 1500*time.Millisecond {
		t.Errorf("call took %v; want about --timeout 300ms, not the 2 s wait for a provider", r.elapsed)
	}
}

// tester71 #2: a --timeout given on the command line bounds the start of
// the configuration's plugins too: a filter plugin slow to start
// (start_timeout 30s) took call --timeout 500ms its whole start.
func TestT71_2_CallTimeoutBoundsPluginStart(t *testing.T) {
	t.Parallel()
	moody := buildPlugin(t, "github.com/airnode/airnode/sdk/pluginrpc/testdata/moody")
	mark := "T71_MARK=" + t.Name()
	cfg := writeConfig(t, "plugins:\n  - {name: acme.moody, point: filter, command: "+moody+", start_timeout: 30s, env: {START_DELAY: 20s, T71_MARK: "+t.Name()+"}}\n")
	r := call(t, noAirnodeEnv, "--config", cfg, "--timeout", "500ms", "airnode://127.0.0.1:1/demo.Echo", "Echo", `"x"`)
	t.Logf("filter plugin starting for 20 s, --timeout 500ms: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "CLIENT_TIMEOUT", "call: --timeout 500ms ran out while starting plugins", "acme.moody")
	if r.elapsed > 2500*time.Millisecond {
		t.Errorf("call took %v; want about --timeout 500ms", r.elapsed)
	}
	waitFor(t, "the plugin process stopped", func() bool { return len(running(t, moody, mark)) == 0 })
}

// tester71 #9: a flag value of the wrong form is a usage error, exit 2,
// printed as the other commands print theirs, without a status that
// reads like the provider's answer.
func TestT71_9_CallFlagValueErrorsAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "-1s"}, `airnode: call: --timeout "-1s": want a positive duration`},
		{[]string{"--timeout", "0.5"}, `airnode: call: --timeout "0.5": want a duration such as 500ms, 1.5s or 3000 (ms)`},
		{[]string{"--timeout", "0"}, `airnode: call: --timeout "0": want a positive duration`},
		{[]string{"-a", "tenant"}, `airnode: call: -a "tenant": want key=value`},
		{[]string{"-p", "timeout=1s", "--timeout", "2s"}, "airnode: call: -p timeout=1s conflicts with --timeout 2s"},
	} {
		r := call(t, noAirnodeEnv, append(tc.args, "airnode://127.0.0.1:1/demo.Echo", "Echo", "1")...)
		expectUsage(t, r, tc.want)
		if strings.Contains(r.stderr, "CLIENT_ERROR") {
			t.Errorf("call %v: stderr %q has a status", tc.args, r.stderr)
		}
	}
	// --timeout 0 was the kernel's refusal at refer: "CLIENT_ERROR:
	// kernel: refer airnode.Health: invalid value ..."
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "health", "--timeout", "0", "127.0.0.1:1")
	expectUsage(t, r, `airnode: health: --timeout "0": want a positive duration`)
}

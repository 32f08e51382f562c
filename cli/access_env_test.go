package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tester16 finding 10: the consumer's access line named no provider and
// the two sides shared nothing, so the lines of one call could not be
// paired. Through a registry, the consumer's line names the provider the
// cluster called, and with accesslog.attachments=trace both lines print
// the trace id the call carried.
func TestAccess_ConsumerAndProviderLinesPair(t *testing.T) {
	reg := "file://" + t.TempDir()
	g := startGroupServe(t, "--registry", reg, "-p", "accesslog=true", "-p", "accesslog.attachments=trace")
	r := runCommand(t, 20*time.Second, nil, "call", "--registry", reg, "-a", "trace=T-777",
		"-p", "accesslog=true", "-p", "accesslog.attachments=trace", "demo.Echo", "Echo", `"hi"`)
	expectOK(t, r, `"hi"`)
	consumer := regexp.MustCompile(`msg=access component=accesslog side=consumer provider=` + regexp.QuoteMeta(g.addr) + ` service=demo.Echo method=Echo status=OK duration=\S+ duration_ms=[0-9.]+ attachments.trace=T-777`)
	if !consumer.MatchString(r.stderr) {
		t.Errorf("consumer's access line lacks the provider %s or the trace:\n%s", g.addr, r.stderr)
	}
	waitFor(t, "the provider's access line", func() bool { return strings.Contains(g.log.String(), "msg=access") })
	provider := regexp.MustCompile(`msg=access component=accesslog side=provider consumer=127.0.0.1:\d+ consumer_application=airnode service=demo.Echo method=Echo status=OK duration=\S+ duration_ms=[0-9.]+ attachments.trace=T-777`)
	if !provider.MatchString(g.log.String()) {
		t.Errorf("provider's access line lacks the trace:\n%s", g.log.String())
	}
}

// Tester16 finding 10: call's --help said --log-level defaults to info,
// while call logs at warn (it prints its result only), and an access
// line asked for with -p accesslog=true was dropped unless --log-level
// info was given. The help now says the per-command default, and the
// access line is printed.
func TestCall_LogLevelHelpAndAccessLine(t *testing.T) {
	g := startGroupServe(t)
	direct := "airnode://" + g.addr + "/demo.Echo"
	r := runCommand(t, 20*time.Second, nil, "call", direct, "Echo", `"quiet"`)
	expectOK(t, r, `"quiet"`)
	if r.stderr != "" {
		t.Errorf("call without accesslog wrote to stderr: %q", r.stderr)
	}
	r = runCommand(t, 20*time.Second, nil, "call", "-p", "accesslog=true", direct, "Echo", `"logged"`)
	expectOK(t, r, `"logged"`)
	if !strings.Contains(r.stderr, "msg=access component=accesslog side=consumer provider="+g.addr) {
		t.Errorf("call -p accesslog=true printed no access line:\n%s", r.stderr)
	}
	r = runCommand(t, 20*time.Second, nil, "call", "--log-level", "warn", "-p", "accesslog=true", direct, "Echo", `"x"`)
	if strings.Contains(r.stderr, "msg=access") {
		t.Errorf("--log-level warn still printed the access line:\n%s", r.stderr)
	}
	r = runCommand(t, 20*time.Second, nil, "call", "--help")
	if strings.Contains(r.stdout, `(default "info")`) || !strings.Contains(r.stdout, "call, bench and plugin check: warn") {
		t.Errorf("call --help on --log-level:\n%s", r.stdout)
	}
}

// Tester16 finding 11: a misspelt AIRNODE_ variable was ignored silently
// (AIRNODE_REGISTY: the node joined the default registry). Every command
// warns once, naming it, the nearest known variable and the known ones;
// known variables are not warned about.
func TestEnv_UnknownAirnodeVariableIsWarned(t *testing.T) {
	r := runCommand(t, 20*time.Second, []string{"AIRNODE_REGISTY=file:///tmp/x", "AIRNODE_ZZZ=1", "AIRNODE_SHUTDOWN_WAIT=1s"}, "list")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "airnode: list: warning: environment variables with the AIRNODE_ prefix"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, r.stderr)
	}
	for _, want := range []string{`unknown="AIRNODE_REGISTY, AIRNODE_ZZZ"`, "AIRNODE_REGISTY: did you mean AIRNODE_REGISTRY?", "known=\"AIRNODE_LISTEN"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("warning lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runCommand(t, 20*time.Second, []string{"AIRNODE_SHUTDOWN_WAIT=1s", "AIRNODE_PLUGIN_LOG=debug"}, "list")
	if strings.Contains(r.stderr, "environment variables") {
		t.Errorf("known variables were warned about:\n%s", r.stderr)
	}
}

package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// `serve -p accepts=3` benched with 6 connections: bench says only 3 were
// up because the provider refused the others at accepts=3 (it tells the
// consumer so before it closes, tester72 #8), the provider logs the refusal naming
// accepts=3, /metrics counts it in airnode_accept_refused_total and /stats
// in transport.accept_refused, and a call still succeeds on a connection
// of its own once bench has gone (tester17 finding 4).
func TestAccepts_ServeRefusesBeyondTheLimit(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0", "-p", "accepts=3")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	out := benchRun(t, nil, p.url("demo.Echo"), "-n", "50", "-c", "2", "--connections", "6")
	t.Logf("bench: %s", strings.SplitN(out, "\n", 2)[0])
	// The provider says why before it closes (tester72 #8): no guess.
	if !strings.Contains(out, "only 3 of 6 connection(s) up (the others failed to connect: the provider refused the connection: it already serves 3 connections, its limit (accepts=3))") {
		t.Errorf("bench did not say that only 3 of 6 connections were up, the provider refusing them at accepts=3:\n%s", out)
	}
	if log := p.logText(); !strings.Contains(log, "its limit (URL key accepts=3); closed at once") {
		t.Errorf("provider log lacks the refusal naming accepts=3:\n%s", log)
	}
	body := getMetrics(t, m[1])
	if !regexp.MustCompile(`(?m)^airnode_accept_refused_total [1-9]`).MatchString(body) {
		t.Errorf("/metrics: airnode_accept_refused_total not above 0")
	}
	if r := runCommand(t, 20*time.Second, nil, "stats", "--json", m[1]); r.code != 0 || !regexp.MustCompile(`"transport.accept_refused": *[1-9]`).MatchString(r.stdout) {
		t.Errorf("stats --json: exit %d, want transport.accept_refused above 0:\n%s%s", r.code, r.stdout, r.stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := runCommand(t, 20*time.Second, nil, "call", p.url("demo.Echo"), "Echo", `"after"`)
		if r.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call after bench: exit %d: %s", r.code, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

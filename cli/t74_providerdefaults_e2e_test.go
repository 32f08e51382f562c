package cli

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// tester74 #1, the reported run: serve -p group=rt -p retries=0 -p
// executes=1 -p timeout=5000 -p cluster=failfast, and two calls of Sleep
// 1500 at once through the registry: the second is refused once
// (SERVER_THREADPOOL_EXHAUSTED, the provider's retries=0 being the
// consumer's default), not "failed after 3 attempts". serve warns once
// that its cluster is each consumer's choice, and not of retries. The
// real binary against a real serve.
func TestT74_ServeRetriesIsTheConsumersDefaultAndClusterIsWarned(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "-p", "group=rt", "-p", "retries=0", "-p", "executes=1", "-p", "timeout=5000",
		"-p", "cluster=failfast", "-p", "Sleep.idempotent=true")
	log := p.logText()
	const warn = "cluster=failfast is published but has no effect: each consumer chooses its cluster from its own reference URL (a reference's cluster=..., call/bench: -p cluster=...)"
	if strings.Count(log, warn) != 1 || strings.Count(log, "level=WARN") != 1 {
		t.Errorf("serve: want one WARN, %q; log:\n%s", warn, log)
	}

	var wg sync.WaitGroup
	rs := make([]result, 2)
	for i := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(300 * time.Millisecond) // the first holds the provider's one execution
			}
			rs[i] = runCommand(t, 30*time.Second, nil, "call", "--registry", "file://"+dir, "rt/demo.Echo", "Sleep", "1500")
		}()
	}
	wg.Wait()
	if rs[0].code != 0 || strings.TrimSpace(rs[0].stdout) != "1500" {
		t.Errorf("first call: exit %d, stdout %q, stderr %q", rs[0].code, rs[0].stdout, rs[0].stderr)
	}
	if rs[1].code == 0 || !strings.Contains(rs[1].stderr, "SERVER_THREADPOOL_EXHAUSTED") || strings.Contains(rs[1].stderr, "failed after") {
		t.Errorf("second call: exit %d, stderr %q; want SERVER_THREADPOOL_EXHAUSTED after 1 attempt (the provider's retries=0)", rs[1].code, rs[1].stderr)
	}
}

// tester74 #1: list --explain shows a provider's retries and idempotent
// as used (FROM provider) when the reference sets neither, and names the
// provider's value the reference's own replaces.
func TestT74_ExplainShowsProviderRetriesAndIdempotent(t *testing.T) {
	provider := "airnode://10.0.0.1:20880/demo.Echo?methods=Echo,Sleep&retries=3&Sleep.retries=0&Sleep.idempotent=true"
	code, out, errOut := airnode(t, nil, "list", "--explain", "consumer://10.0.0.9/demo.Echo", "--provider", provider)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range [][]string{
		{"retries", "service", "3", "provider (retries)"},
		{"retries", "method Sleep", "0", "provider (Sleep.retries)"},
		{"idempotent", "service", "false", "default (failover)"},
		{"idempotent", "method Sleep", "true", "provider (Sleep.idempotent)"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", r, out)
		}
	}
	code, out, errOut = airnode(t, nil, "list", "--explain", "consumer://10.0.0.9/demo.Echo?retries=1&idempotent=false", "--provider", provider)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range [][]string{
		{"retries", "service", "1", "SERVICE_URL query (retries)"},
		{"method Sleep", "(the provider's Sleep.retries=0 is not used: the reference's retries=1 wins)"},
		{"idempotent", "service", "false", "SERVICE_URL query (idempotent)"},
		{"method Sleep", "(the provider's Sleep.idempotent=true is not used: the reference's idempotent=false wins)"},
	} {
		if !row(r...).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", r, out)
		}
	}
}

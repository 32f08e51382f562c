package cli

import (
	"strings"
	"testing"
	"time"
)

// fix-bk #1: `airnode health ADDR` of a provider serving --transport tcp
// first tries the default smux and then tcp; the provider logged the
// smux connection WARN "protocol: bad magic 0x0200 ... the consumer
// speaks another protocol", as it would a broken peer or an attack. It
// now recognizes a smux consumer's opening (spi.OpeningRecognizer) and
// logs the close at Info as a transport mismatch naming transport=smux:
// the provider's log has no WARN line for a health check.
func TestBK_HealthOfATCPProviderLeavesItsLogCleanAtWarn(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp")
	before := p.logText()
	for _, args := range [][]string{{p.addr}, {p.addr, "demo.Echo"}} {
		if r := health(t, append([]string{"--timeout", "2s"}, args...)...); r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" {
			t.Fatalf("health %v: exit %d, stdout %q, stderr %q; want 0 and SERVING", args, r.code, r.stdout, r.stderr)
		}
	}
	const mismatch = `reason="transport mismatch: the consumer speaks transport=smux, this listener transport=tcp: the consumer's URL key transport must be tcp`
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logText(), mismatch) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log := strings.TrimPrefix(p.logText(), before)
	var closes int
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("provider logged for a health check: %s", line)
		}
		if strings.Contains(line, mismatch) {
			closes++
			if !strings.Contains(line, "level=INFO") {
				t.Errorf("the transport mismatch's record is not at INFO: %s", line)
			}
		}
	}
	if closes == 0 {
		t.Errorf("provider log after two health checks:\n%s\nwant an INFO record %q for the smux tries", log, mismatch)
	}
}

// fix-bk #2: the consumer's hint for a connection the provider closed at
// its first ping (likely a transport or TLS mismatch) named only "airnode
// call/bench: -p transport=NAME"; met by `airnode health -p
// transport=smux` of a tcp provider it names health's flag too.
func TestBK_HealthMismatchHintNamesItsFlag(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp")
	r := health(t, "--timeout", "2s", p.addr, "-p", "transport=smux")
	// cut to the essentials (fix-cm): the transport, where it was given, the -p to try
	expectFail(t, r, "CHANNEL_INACTIVE: "+p.addr+" closed the connection at its first ping: likely a transport mismatch (this consumer's transport=smux, from -p transport=smux; try -p transport=tcp) or TLS on the provider (try -p tls=true -p tls.ca=FILE)")
}

// fix-bk #3: list --explain airnode://127.0.0.1/demo.Echo (a host without
// a port) was explained as if call could use it; call and bench refuse
// it, exit 2, since there is no default port. list --explain now refuses
// it in call's words, exit 2, and port 0 likewise; a Dubbo consumer://
// URL naming the consumer's host without a port stays explained when
// --provider gives the provider it merges with.
func TestBK_ListExplainHostWithoutPortIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, svc := range []string{"airnode://127.0.0.1/demo.Echo", "airnode://127.0.0.1:0/demo.Echo", "airnode://127.0.0.1:37401,h2/demo.Echo?timeout=2s"} {
		c := runCommand(t, 30*time.Second, noAirnodeEnv, "call", svc, "Echo", "1")
		l := runCommand(t, 30*time.Second, noAirnodeEnv, "list", "--explain", svc)
		if c.code != exitUsage || !strings.HasPrefix(c.stderr, "airnode: call: SERVICE_URL ") {
			t.Fatalf("call %s: exit %d, stderr %q; want a usage error", svc, c.code, c.stderr)
		}
		want := "airnode: list --explain: " + strings.TrimPrefix(c.stderr, "airnode: call: ")
		if l.code != exitUsage || l.stderr != want || l.stdout != "" {
			t.Errorf("list --explain %s: exit %d, stdout %.200q, stderr %q; want exit 2, nothing on stdout and %q", svc, l.code, l.stdout, l.stderr, want)
		}
	}
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "list", "--explain", "airnode://127.0.0.1/demo.Echo")
	for _, s := range []string{`host "127.0.0.1" has no port: give host:port`, "(airnode://127.0.0.1:20880/demo.Echo), or no host to use the registry (demo.Echo)"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("list --explain airnode://127.0.0.1/demo.Echo: stderr %q; want it to say %q", r.stderr, s)
		}
	}
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "list", "--explain", "consumer://10.0.0.9/demo.Echo", "--provider", "airnode://127.0.0.1:20880/demo.Echo")
	if r.code != 0 || !strings.Contains(r.stdout, "service  demo.Echo") {
		t.Errorf("list --explain consumer://10.0.0.9/demo.Echo --provider ...: exit %d, stdout %.300q, stderr %q; want it explained", r.code, r.stdout, r.stderr)
	}
}

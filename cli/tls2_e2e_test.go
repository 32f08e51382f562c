package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// A consumer's TLS failure leads with its cause and what to do, through
// the binaries: an expired client certificate (the provider's verdict
// arrives as an alert during the first ping under TLS 1.3) and a provider
// certificate of a CA the consumer was not given. The provider's log
// names the rejected certificate's subject, and says what a consumer's
// hang-up under mutual TLS means instead of a bare EOF.
func TestE2E_TLSFailuresNameTheirCause(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	xCert, xKey := ca.IssueExpired(t, "old-consumer")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--tls-cert", pCert, "--tls-key", pKey, "--tls-ca", ca.CertFile)
	base := p.url("demo.Echo") + "?connect.timeout=2s&timeout=2s&tls=true"

	r := call(t, nil, base+"&tls.ca="+ca.CertFile+"&tls.cert="+xCert+"&tls.key="+xKey, "Echo", `"x"`)
	t.Logf("expired client certificate: %s", r.stderr)
	failsWith(t, r, "CHANNEL_INACTIVE", "rejected this consumer's certificate (tls.cert): expired certificate")
	leadsWith(t, r.stderr, "expired certificate", "connection limit")

	r = call(t, nil, base, "Echo", `"x"`)
	t.Logf("no tls.ca: %s", r.stderr)
	failsWith(t, r, "CHANNEL_INACTIVE", "-p tls.ca=FILE", "unknown authority")
	leadsWith(t, r.stderr, "-p tls.ca=FILE", "x509")

	r = call(t, nil, base+"&tls.ca="+ca.CertFile, "Echo", `"x"`)
	failsWith(t, r, "CHANNEL_INACTIVE", "client certificate")

	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logText(), "hung up") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log := p.logText()
	if !strings.Contains(log, `peer_subject="CN=old-consumer"`) || !strings.Contains(log, "expired") {
		t.Errorf("the provider's log does not name the expired consumer certificate:\n%s", log)
	}
	if !strings.Contains(log, "hung up during the handshake: under mutual TLS") {
		t.Errorf("the provider's log does not explain the no-certificate consumer's EOF:\n%s", log)
	}
}

// leadsWith fails t unless cause appears in msg before guess (or guess
// is absent).
func leadsWith(t *testing.T, msg, cause, guess string) {
	t.Helper()
	i, j := strings.Index(msg, cause), strings.Index(msg, guess)
	if i < 0 || j >= 0 && j < i {
		t.Errorf("%q does not lead %q:\n%s", cause, guess, msg)
	}
}

// failsWith fails t unless r exited 1 with a last stderr line (the
// error; Warn lines may come before it) starting with status and holding
// each of want.
func failsWith(t *testing.T, r result, status string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	i := len(lines) - 1
	for i > 0 && strings.HasPrefix(lines[i], "  ") {
		i-- // a failover's attempt lines follow its first (tester75 #2)
	}
	last := strings.Join(lines[i:], "\n")
	if r.code != 1 || !strings.HasPrefix(last, status) {
		t.Errorf("exit %d, error %q; want exit 1 and %s", r.code, last, status)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("error %q lacks %q", last, w)
		}
	}
}

// bench through a registry listing a TLS provider it cannot verify (no
// tls.ca) and a plain one: the summary and --json say the TLS failure,
// not a guess at the provider's file descriptors.
func TestE2E_BenchNamesTheTLSFailure(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir, "--tls-cert", pCert, "--tls-key", pKey)
	serve(t, "127.0.0.1:0", dir)
	r := benchResult(t, "--registry", "file://"+dir, "--duration", "1s", "-c", "2", "demo.Echo")
	t.Logf("bench: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	out := r.stdout + r.stderr
	if !strings.Contains(out, "only 1 of 2 connection(s) up") || !strings.Contains(out, "unknown authority") || strings.Contains(out, "file descriptors") {
		t.Errorf("the summary does not name the TLS failure:\n%s", out)
	}
	r = benchResult(t, "--registry", "file://"+dir, "--duration", "1s", "-c", "2", "--json", "demo.Echo")
	if !strings.Contains(r.stdout, `"connect_error":`) || !strings.Contains(r.stdout, "unknown authority") {
		t.Errorf("--json has no connect_error naming the TLS failure:\n%s", r.stdout)
	}
}

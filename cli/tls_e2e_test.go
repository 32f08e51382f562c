package cli

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// Issue 8 acceptance through the binaries: `airnode serve` with mutual
// TLS; `airnode call` with a certificate from the right CA succeeds, one
// without fails with a TLS error within the connect timeout, and a
// plaintext call fails rather than hangs.
func TestE2E_MutualTLS(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	cCert, cKey := ca.Issue(t, "consumer")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--tls-cert", pCert, "--tls-key", pKey, "--tls-ca", ca.CertFile)
	if strings.Contains(p.logText(), pKey) {
		t.Error("the provider's key path is in the registered URL")
	}
	base := p.url("demo.Echo") + "?connect.timeout=1s&timeout=2s&tls=true&tls.ca=" + ca.CertFile

	expectOK(t, call(t, nil, base+"&tls.cert="+cCert+"&tls.key="+cKey, "Echo", `"secure"`), `"secure"`)

	r := call(t, nil, base, "Echo", `"x"`)
	t.Logf("without a certificate: %s", r.stderr)
	expectFail(t, r, "CHANNEL_INACTIVE", "tls", "client certificate")
	if r.elapsed > 5*time.Second {
		t.Errorf("no client certificate: failed after %v", r.elapsed)
	}

	r = call(t, nil, p.url("demo.Echo")+"?connect.timeout=1s&timeout=2s", "Echo", `"x"`)
	t.Logf("plaintext: %s", r.stderr)
	if r.code == 0 || r.elapsed > 8*time.Second {
		t.Errorf("plaintext call: exit %d after %v, stderr %q", r.code, r.elapsed, r.stderr)
	}
}

// --tls-cert without --tls-key: serve exits with an error naming both keys.
func TestE2E_TLSCertWithoutKey(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, _ := ca.Issue(t, "provider")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, binary, "serve", "--listen", "127.0.0.1:0", "--registry", "file://"+dir, "--tls-cert", pCert)
	cmd.Env = append(hostEnviron(), "XDG_RUNTIME_DIR="+dir)
	out, err := cmd.CombinedOutput()
	// the flags as typed, a usage error (tester92 #4)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "--tls-cert "+pCert+" without --tls-key") {
		t.Fatalf("err %v, output %s; want exit 2 naming --tls-cert and --tls-key", err, out)
	}
}

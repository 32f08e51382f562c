package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// mtls2: a provider-side filter plugin authorizes by the consumer's TLS
// client certificate. examples/tenant as a real plugin process, a real
// provider under mutual TLS (a CA made here) with tenant=acme and
// tenant.from=certificate: the consumer whose certificate names acme is
// served; one whose certificate names initech is refused with the
// plugin's BAD_REQUEST naming its certificate, although it sends the
// tenant attachment acme (the certificate decides, not what the consumer
// says), and airnode stats counts it as denied by a filter plugin.
func TestE2E_FilterPluginAuthorizesByClientCertificate(t *testing.T) {
	bin := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - name: tenant\n    point: filter\n    command: " + bin + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ca := tlsconftest.NewCA(t, "airnode mtls2 CA")
	pCert, pKey := ca.Issue(t, "provider")
	aCert, aKey := ca.IssueFor(t, "acme", "orders.acme.example")
	iCert, iKey := ca.IssueFor(t, "initech", "billing.initech.example")

	p := serve(t, "127.0.0.1:0", dir, "--config", cfg, "--metrics", "127.0.0.1:0",
		"--tls-cert", pCert, "--tls-key", pKey, "--tls-ca", ca.CertFile,
		"-p", "tenant=acme,globex", "-p", "tenant.from=certificate")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", p.logText())
	}
	base := p.url("demo.Echo") + "?timeout=5s&tls=true&tls.ca=" + ca.CertFile

	expectOK(t, call(t, nil, base+"&tls.cert="+aCert+"&tls.key="+aKey, "Echo", `"hi"`), `"hi"`)
	r := call(t, nil, "--config", cfg, "-p", "tenant=acme", base+"&tls.cert="+iCert+"&tls.key="+iKey, "Echo", `"hi"`)
	t.Logf("initech's certificate: %s", r.stderr)
	expectFail(t, r, "BAD_REQUEST",
		`tenant: demo.Echo.Echo refused: certificate "CN=initech" (names initech, billing.initech.example) names no tenant served here`)

	s := runCommand(t, 20*time.Second, nil, "stats", m[1])
	if s.code != 0 {
		t.Fatalf("stats: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	row := regexp.MustCompile(`(?m)^provider +demo\.Echo +Echo +(\d+) +(\S+)`).FindStringSubmatch(s.stdout)
	if row == nil || row[1] != "1" || row[2] != "100.00%" {
		t.Errorf("provider's Echo row %q; want 1 call, 100.00%% successful (the refusal is not a call of Echo)\n%s", row, s.stdout)
	}
	if !strings.Contains(s.stdout, "denied by a filter plugin 1") {
		t.Errorf("stats does not count the refusal as denied by a filter plugin:\n%s", s.stdout)
	}
}

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// A consumer that finds a TLS provider through the registry gives only
// its trust roots (tls.ca): the provider's published tls=true and
// transport=tcp complete them (as a gRPC client brings its credentials and
// the server decides TLS). Against a real `serve --tls-cert --tls-key
// --transport tcp`: call -p tls.ca=CA succeeds, and list --explain shows
// the providers' tcp and tls (it said smux, the default, before). A
// provider that serves in clear text is refused with an error naming it
// and both ways out, by call (CLIENT_ERROR, not "no provider available")
// and by list --explain; a direct URL with tls.ca but no tls=true is still
// refused by the transport, as before.
func TestTLSProviderThroughRegistryNeedsOnlyTheCA(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	tlsDir, plainDir := t.TempDir(), t.TempDir()
	p := serve(t, "127.0.0.1:0", tlsDir, "--tls-cert", pCert, "--tls-key", pKey, "--transport", "tcp")
	plain := serve(t, "127.0.0.1:0", plainDir)

	expectOK(t, runCommand(t, 20*time.Second, nil, "call", "--registry", "file://"+tlsDir, "-p", "tls.ca="+ca.CertFile, "demo.Echo", "Echo", `"x"`), `"x"`)

	cfg := writeConfig(t, "registry: file://"+tlsDir+"\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?tls.ca="+ca.CertFile)
	if code != 0 || !row("transport", "service", "tcp", "bundled", "service-level key transport=tcp").MatchString(out) ||
		!strings.Contains(out, "providers  1 in file://"+tlsDir+": "+p.addr+" (transport tcp, tls)") || errOut != "" {
		t.Errorf("explain through the registry: exit %d, stderr %q\n%s", code, errOut, out)
	}

	want := "the consumer gives tls.ca=" + ca.CertFile + " but provider " + plain.addr + " publishes no tls=true (it serves in clear text): a consumer's TLS keys complete a provider's tls=true; set tls=true to require TLS, or remove tls.ca"
	expectFail(t, runCommand(t, 20*time.Second, nil, "call", "--registry", "file://"+plainDir, "-p", "tls.ca="+ca.CertFile, "demo.Echo", "Echo", `"x"`),
		"", "CLIENT_ERROR: kernel: provider "+plain.addr+": "+want)
	cfg = writeConfig(t, "registry: file://"+plainDir+"\n")
	code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?tls.ca="+ca.CertFile)
	if code != 1 || strings.TrimSpace(errOut) != "airnode: list: "+want {
		t.Errorf("explain, clear-text provider: exit %d, stderr %q; want %q\n%s", code, errOut, want, out)
	}

	// No provider: the calls depend on what the providers publish.
	cfg = writeConfig(t, "registry: file://"+t.TempDir()+"\n")
	code, _, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo?tls.ca="+ca.CertFile)
	if code != 0 || !strings.Contains(errOut, "airnode: list: warning: tls.ca="+ca.CertFile+" without tls=true: used with each provider that publishes tls=true") {
		t.Errorf("explain, no provider: exit %d, stderr %q", code, errOut)
	}

	direct := p.url("demo.Echo") + "?transport=tcp&tls.ca=" + ca.CertFile
	expectFail(t, runCommand(t, 20*time.Second, nil, "call", direct, "Echo", `"x"`), "CLIENT_ERROR", "tls.ca is set but tls is not true")
	if code, _, errOut := airnode(t, nil, "list", "--explain", direct); code != 1 || !strings.Contains(errOut, "tls.ca is set but tls is not true") {
		t.Errorf("explain, direct: exit %d, stderr %q", code, errOut)
	}
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", direct+"&tls=true", "Echo", `"x"`), `"x"`)
}

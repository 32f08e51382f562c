package kernel

import (
	"context"
	"crypto/x509"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// peerService answers with the consumer's certificate as its method sees
// it (spi.PeerCertificate): "CN|first DNS name", or "none".
type peerService struct{}

func (peerService) Peer(ctx context.Context) (string, error) {
	cert := spi.PeerCertificate(ctx)
	if cert == nil {
		return "none", nil
	}
	dns := ""
	if len(cert.DNSNames) > 0 {
		dns = cert.DNSNames[0]
	}
	return cert.Subject.CommonName + "|" + dns, nil
}

// Under mutual TLS, on both transports, over real loopback TLS: the
// method reads the consumer's verified certificate from its context, the
// provider's access log names it (client_cert), tls.client.names admits
// a certificate holding an allowed name (exact or *.suffix, DNS name or
// common name) and refuses one that holds none at the handshake, the
// provider's log naming the certificate's names and the allowed list and
// the consumer's error pointing at tls.client.names; a certificate
// marked for serverAuth only is refused as a client's (Go checks
// ExtKeyUsageClientAuth), one with no extended key usage is accepted.
// Without TLS the method sees no certificate.
func TestMutualTLSPeerIdentity(t *testing.T) {
	ca := tlsconftest.NewCA(t, "mtls1 CA")
	pCert, pKey := ca.Issue(t, "provider")
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	ordersCert, ordersKey := ca.IssueUsage(t, "orders", client, "orders.svc.example")
	billingCert, billingKey := ca.IssueUsage(t, "billing", client, "billing.other.example")
	cnOnlyCert, cnOnlyKey := ca.IssueUsage(t, "batch-job", client)
	serverOnlyCert, serverOnlyKey := ca.IssueUsage(t, "web", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, "web.svc.example")
	noEKUCert, noEKUKey := ca.IssueUsage(t, "legacy", nil, "legacy.svc.example")

	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			var plogs logbuf.Buffer
			// One node per service: services on one address share its TLS.
			export := func(svc, q string) *Exporter {
				t.Helper()
				p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&plogs, nil))), WithShutdownWait(0))
				t.Cleanup(func() { p.Close() })
				e, err := p.Export(ctxT(t), peerService{}, spi.MustParse("airnode://127.0.0.1:0/"+svc+"?transport="+tr+q))
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			tlsq := "&tls=true&tls.cert=" + pCert + "&tls.key=" + pKey + "&tls.ca=" + ca.CertFile
			open := export("mtls.Open", "&accesslog=true"+tlsq)
			closed := export("mtls.Closed", tlsq+"&tls.client.names=*.svc.example,batch-job")
			plain := export("mtls.Plain", "&accesslog=true")
			if s := closed.URL().String(); strings.Contains(s, "tls.client.names") {
				t.Errorf("the published URL carries the allowed names: %s", s)
			}

			c := NewNode(testCatalogs(t), WithLogger(quiet))
			defer c.Close()
			call := func(e *Exporter, svc, q string) (string, error) {
				t.Helper()
				r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/"+svc+"?transport="+tr+"&timeout=2s&connect.timeout=2s&retries=0"+q), spi.URL{})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				var out string
				err = r.Call(ctxT(t), "Peer", nil, &out)
				return out, err
			}
			with := func(cert, key string) string {
				return "&tls=true&tls.ca=" + ca.CertFile + "&tls.cert=" + cert + "&tls.key=" + key
			}

			// The method sees the certificate; the access log names it.
			if got, err := call(open, "mtls.Open", with(ordersCert, ordersKey)); err != nil || got != "orders|orders.svc.example" {
				t.Fatalf("Peer = %q, %v; want orders|orders.svc.example", got, err)
			}
			eventually(t, "the access line", func() bool { return line(plogs.String(), "msg=access", "service=mtls.Open") != "" })
			if l := line(plogs.String(), "msg=access", "service=mtls.Open"); !strings.Contains(l, `client_cert="CN=orders"`) {
				t.Errorf("access line without client_cert=\"CN=orders\": %s", l)
			}
			// Without TLS: no certificate, no client_cert.
			if got, err := call(plain, "mtls.Plain", ""); err != nil || got != "none" {
				t.Fatalf("plain Peer = %q, %v; want none", got, err)
			}
			eventually(t, "the plain access line", func() bool { return line(plogs.String(), "msg=access", "service=mtls.Plain") != "" })
			if l := line(plogs.String(), "msg=access", "service=mtls.Plain"); strings.Contains(l, "client_cert") {
				t.Errorf("a clear-text call's access line names a certificate: %s", l)
			}

			// tls.client.names: a DNS name under *.svc.example, a common name.
			if got, err := call(closed, "mtls.Closed", with(ordersCert, ordersKey)); err != nil || got != "orders|orders.svc.example" {
				t.Errorf("allowed by *.svc.example: %q, %v", got, err)
			}
			if got, err := call(closed, "mtls.Closed", with(cnOnlyCert, cnOnlyKey)); err != nil || got != "batch-job|" {
				t.Errorf("allowed by its common name: %q, %v", got, err)
			}
			_, err := call(closed, "mtls.Closed", with(billingCert, billingKey))
			// Under TLS 1.3 the client finishes its handshake before the
			// provider judges its certificate: the provider's alert naming
			// tls.client.names usually reaches it, but its close can come
			// first ("closed by peer"; once in a clean-clone CI on smux).
			// The provider's line below is the refusal's reason either way.
			if err == nil || !strings.Contains(err.Error(), "tls.client.names") && spi.StatusOf(err) != spi.StatusChannelInactive {
				t.Fatalf("a certificate with no allowed name: %v; want a refusal naming tls.client.names (or CHANNEL_INACTIVE when the close beat the alert)", err)
			}
			t.Logf("consumer: %v", err)
			want := `the consumer's certificate (CN=billing, DNS:billing.other.example) holds no name tls.client.names allows (*.svc.example, batch-job)`
			eventually(t, "the provider's refusal line", func() bool { return strings.Contains(plogs.String(), want) })
			t.Logf("provider: %s", line(plogs.String(), "billing.other.example"))

			// Extended key usage: serverAuth only is no client certificate;
			// no extended key usage at all is accepted (Go's rule).
			_, err = call(open, "mtls.Open", with(serverOnlyCert, serverOnlyKey))
			if err == nil {
				t.Fatal("a certificate marked for serverAuth only was accepted as a client's")
			}
			eventually(t, "the key usage refusal", func() bool { return strings.Contains(plogs.String(), "incompatible key usage") })
			if got, err := call(open, "mtls.Open", with(noEKUCert, noEKUKey)); err != nil || got != "legacy|legacy.svc.example" {
				t.Errorf("a certificate without extended key usage: %q, %v; Go accepts it as a client's", got, err)
			}
		})
	}
}

// A bad tls.client.names fails the export, naming the key and what is
// allowed; so does one without tls.ca; services on one address must
// agree on it.
func TestClientNamesKeyChecked(t *testing.T) {
	ca := tlsconftest.NewCA(t, "mtls1 CA")
	pCert, pKey := ca.Issue(t, "provider")
	tlsq := "&tls=true&tls.cert=" + pCert + "&tls.key=" + pKey
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	for q, want := range map[string]string{
		tlsq + "&tls.ca=" + ca.CertFile + "&tls.client.names=a.example,,b": `"" is not a name`,
		tlsq + "&tls.ca=" + ca.CertFile + "&tls.client.names=*.":           `"*." is not a name`,
		tlsq + "&tls.ca=" + ca.CertFile + "&tls.client.names=a*.example":   `"a*.example" is not a name`,
		tlsq + "&tls.client.names=a.example":                               "needs tls.ca",
		"&tls.client.names=a.example":                                      "tls.client.names is set but tls is not true",
	} {
		_, err := p.Export(ctxT(t), peerService{}, spi.MustParse("airnode://127.0.0.1:0/mtls.Bad?"+q[1:]))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", q, err, want)
		}
	}
	e, err := p.Export(ctxT(t), peerService{}, spi.MustParse("airnode://127.0.0.1:0/mtls.A?"+tlsq[1:]+"&tls.ca="+ca.CertFile+"&tls.client.names=a.example"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Export(ctxT(t), peerService{}, spi.MustParse("airnode://"+e.URL().Address()+"/mtls.B?"+tlsq[1:]+"&tls.ca="+ca.CertFile+"&tls.client.names=b.example"))
	if err == nil || !strings.Contains(err.Error(), "tls.client.names") {
		t.Errorf("two services on one address with different tls.client.names: %v", err)
	}
}

// line returns the first line of s containing every one of subs.
func line(s string, subs ...string) string {
next:
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if !strings.Contains(l, sub) {
				continue next
			}
		}
		return l
	}
	return ""
}

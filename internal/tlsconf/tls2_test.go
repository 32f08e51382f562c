package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// A provider under mutual TLS facing a consumer that keeps redialing with
// a rejected certificate logs a bounded number of lines (the first, then
// one per doubling), each naming the consumer's certificate; a consumer
// without a certificate gets a line saying what its hang-up means, not a
// bare EOF.
func TestHandshakeFailuresAreBoundedAndNamed(t *testing.T) {
	var buf logbuf.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, nil))

	ca, other := tlsconftest.NewCA(t, "airnode test CA"), tlsconftest.NewCA(t, "other CA")
	pCert, pKey := ca.Issue(t, "provider")
	srvCfg, err := (Settings{Enabled: true, Cert: pCert, Key: pKey, CA: ca.CertFile}).Server()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{}
	startEchoOn(t, s, Listener(raw, srvCfg, 2*time.Second, lg, nil))

	// A stranger's certificate, presented as a consumer that does not check
	// what the provider accepts would (the provider verifies it).
	xCert, xKey := other.Issue(t, "stranger")
	pair, err := tls.LoadX509KeyPair(xCert, xKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(ca.CertFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	stranger := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }}
	const attempts = 40
	for i := 0; i < attempts; i++ {
		c, err := dial(t, s.addr(), stranger)
		if err == nil {
			// TLS 1.3: the provider's verdict arrives with the first read
			_ = roundTrip(c)
			c.Close()
		}
	}
	noCert, err := (Settings{Enabled: true, CA: ca.CertFile}).Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, s.addr(), noCert); err == nil {
		t.Fatal("a consumer without a certificate passed mutual TLS")
	}
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(buf.String(), "hung up") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	var strangerLines, eofLines []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		switch {
		case strings.Contains(l, "unknown authority"):
			strangerLines = append(strangerLines, l)
		case strings.Contains(l, "hung up"):
			eofLines = append(eofLines, l)
		}
	}
	// 40 failures: lines at 1, 2, 4, 8, 16, 32.
	if len(strangerLines) != 6 {
		t.Fatalf("%d lines for %d rejected certificates, want 6 (1, 2, 4, ... 32):\n%s", len(strangerLines), attempts, buf.String())
	}
	for i, l := range strangerLines {
		if !strings.Contains(l, `peer_subject="CN=stranger"`) || !strings.Contains(l, `peer_issuer="CN=other CA"`) {
			t.Errorf("line does not name the consumer's certificate: %s", l)
		}
		if i > 0 && !strings.Contains(l, "suppressed=") {
			t.Errorf("line %d without suppressed=: %s", i, l)
		}
	}
	if !strings.Contains(strangerLines[5], "suppressed=15 in_burst=32") {
		t.Errorf("last line: %s", strangerLines[5])
	}
	if len(eofLines) != 1 || !strings.Contains(eofLines[0], "mutual TLS") {
		t.Errorf("no-certificate consumer: %q\n%s", eofLines, buf.String())
	}
	t.Logf("stranger: %s\nno certificate: %s", strangerLines[0], eofLines)
}

// tls.client.names: exact names and *.suffix, against DNS names and the
// common name, ignoring case; malformed lists name the bad entry.
func TestClientNames(t *testing.T) {
	s := mustParse(t, "airnode://h:1/s?tls=true&tls.client.names=Orders.Example,%20*.svc.example")
	if got := strings.Join(s.ClientNames, "|"); got != "Orders.Example|*.svc.example" {
		t.Fatalf("ClientNames = %q", got)
	}
	cert := func(cn string, dns ...string) *x509.Certificate {
		c := &x509.Certificate{DNSNames: dns}
		c.Subject.CommonName = cn
		return c
	}
	for _, tc := range []struct {
		cert *x509.Certificate
		want bool
	}{
		{cert("", "orders.example"), true},
		{cert("orders.EXAMPLE"), true},
		{cert("x", "a.svc.example"), true},
		{cert("x", "a.b.svc.example"), true},
		{cert("x", "svc.example"), false},
		{cert("x", "a.svcXexample", "evilsvc.example"), false},
		{cert("billing", "billing.other.example"), false},
		{cert(""), false},
	} {
		if got := AllowedName(tc.cert, s.ClientNames); got != tc.want {
			t.Errorf("AllowedName(CN=%q, DNS %q) = %v", tc.cert.Subject.CommonName, tc.cert.DNSNames, got)
		}
	}
	for _, bad := range []string{"", "a,,b", "*.", "*", "a*.b", "*.a*.b", "a b"} {
		_, err := Parse(spi.MustParse("airnode://h:1/s?tls=true&tls.client.names=" + strings.ReplaceAll(bad, " ", "%20")))
		if err == nil || !strings.Contains(err.Error(), "tls.client.names") || !strings.Contains(err.Error(), "*.suffix") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got := Identity(cert("", "a.example")); got != "DNS:a.example" {
		t.Errorf("Identity = %q", got)
	}
}

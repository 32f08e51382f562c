package kernel

import (
	"crypto/x509"
	"testing"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// nu50 finding 3: the TLS handshakes a provider refuses are counted
// (counters.TLS, airnode_tls_handshake_failures_total), by reason, over
// real loopback TLS: a certificate holding no name tls.client.names
// allows, one that fails verification (serverAuth only), one from
// another CA and none at all (a Go consumer hangs up); an admitted
// consumer counts nothing.
func TestT50_RefusedTLSHandshakesAreCounted(t *testing.T) {
	ca := tlsconftest.NewCA(t, "t50 CA")
	rogue := tlsconftest.NewCA(t, "t50 rogue CA")
	pCert, pKey := ca.Issue(t, "provider")
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	okCert, okKey := ca.IssueUsage(t, "orders", client, "orders.svc.example")
	otherCert, otherKey := ca.IssueUsage(t, "billing", client, "billing.other.example")
	webCert, webKey := ca.IssueUsage(t, "web", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, "web.svc.example")
	rogueCert, rogueKey := rogue.IssueUsage(t, "orders", client, "orders.svc.example")

	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), peerService{}, spi.MustParse("airnode://127.0.0.1:0/t50.Tls?tls=true&tls.cert="+pCert+"&tls.key="+pKey+"&tls.ca="+ca.CertFile+"&tls.client.names=*.svc.example"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	defer c.Close()
	call := func(q string) error {
		t.Helper()
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/t50.Tls?timeout=2s&connect.timeout=2s&retries=0&tls=true&tls.ca="+ca.CertFile+q), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out string
		return r.Call(ctxT(t), "Peer", nil, &out)
	}
	total := func() uint64 {
		x := &counters.TLS
		return x.ClientNames.Load() + x.Certificate.Load() + x.NoCertificate.Load() + x.HungUp.Load() + x.Other.Load()
	}
	for _, tc := range []struct {
		name, q string
		c       *counters.Counter // nil: admitted
	}{
		{"admitted", "&tls.cert=" + okCert + "&tls.key=" + okKey, nil},
		{"not in tls.client.names", "&tls.cert=" + otherCert + "&tls.key=" + otherKey, &counters.TLS.ClientNames},
		{"serverAuth only", "&tls.cert=" + webCert + "&tls.key=" + webKey, &counters.TLS.Certificate},
		// A Go consumer hangs up when it holds no certificate the
		// provider's CA signed (the provider's log hint says so).
		{"another CA", "&tls.cert=" + rogueCert + "&tls.key=" + rogueKey, &counters.TLS.HungUp},
		{"no certificate", "", &counters.TLS.HungUp},
	} {
		before, all := uint64(0), total()
		if tc.c != nil {
			before = tc.c.Load()
		}
		err := call(tc.q)
		switch {
		case tc.name == "admitted":
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if n := total() - all; n != 0 {
				t.Errorf("%s: %d handshake failures counted, want 0", tc.name, n)
			}
			continue
		case err == nil:
			t.Fatalf("%s: the call succeeded, want a refusal", tc.name)
		}
		eventually(t, tc.name+": counted", func() bool { return total() > all })
		if tc.c != nil && tc.c.Load() <= before {
			t.Errorf("%s: not counted under its reason", tc.name)
		}
		x := &counters.TLS
		t.Logf("%s: client_names=%d certificate=%d no_certificate=%d hung_up=%d other=%d", tc.name,
			x.ClientNames.Load(), x.Certificate.Load(), x.NoCertificate.Load(), x.HungUp.Load(), x.Other.Load())
	}
}

package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// mTLS through a real node on both transports: a consumer with a
// certificate from the provider's CA succeeds; one without fails with a TLS
// error within its connect timeout; a plaintext consumer gets an error, not
// a hang.
func TestTLS_MutualThroughNode(t *testing.T) {
	for _, transport := range []string{"smux", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			ca := tlsconftest.NewCA(t, "airnode test CA")
			pCert, pKey := ca.Issue(t, "provider")
			cCert, cKey := ca.Issue(t, "consumer")
			_, addr := provider(t, "transport="+transport+"&tls=true&tls.cert="+pCert+"&tls.key="+pKey+"&tls.ca="+ca.CertFile)
			cn := newNode(t)
			ctx := ctxT(t)
			base := "transport=" + transport + "&connect.timeout=1s&timeout=1s&"

			good := refer(t, cn, addr, base+"tls=true&tls.ca="+ca.CertFile+"&tls.cert="+cCert+"&tls.key="+cKey)
			if v, err := good.Invoke(ctx, "Echo", "secure"); err != nil || v != "secure" {
				t.Fatalf("consumer with a certificate: %v, %v", v, err)
			}

			for name, q := range map[string]string{
				"no client certificate": base + "tls=true&tls.ca=" + ca.CertFile,
				"plaintext consumer":    base,
			} {
				start := time.Now()
				_, err := refer(t, cn, addr, q).Invoke(ctx, "Echo", "x")
				took := time.Since(start)
				t.Logf("%s: %v after %v", name, err, took)
				var e *spi.Error
				if err == nil || !errors.As(err, &e) || took > 3*time.Second {
					t.Errorf("%s: %v after %v, want a failure within the connect timeout", name, err, took)
				}
				if name == "no client certificate" && err != nil && !strings.Contains(err.Error(), "tls") {
					t.Errorf("%s: %v does not name TLS", name, err)
				}
			}
		})
	}
}

// Through a registry, the provider's certificate paths must not become the
// consumer's: a consumer without tls.cert is refused by a mutual-TLS
// provider even when it runs on the provider's machine.
func TestTLS_RegistryDoesNotLendTheProviderCertificate(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode test CA")
	pCert, pKey := ca.Issue(t, "provider")
	cat := catalogs(t)
	reg := spi.MustParse("memory://tls")
	pn := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0), kernel.WithRegistry(reg))
	defer pn.Close()
	e, err := pn.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?tls=true&tls.cert="+pCert+"&tls.key="+pKey+"&tls.ca="+ca.CertFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("registered %s", e.URL())
	cn := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer cn.Close()
	r, err := cn.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?tls=true&connect.timeout=1s&tls.ca="+ca.CertFile), reg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(ctxT(t), "Echo", "x")
	t.Logf("consumer without a certificate: %v", err)
	if err == nil {
		t.Fatal("a consumer without tls.cert got through a mutual-TLS provider")
	}
}

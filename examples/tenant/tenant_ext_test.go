package tenant_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/examples/tenant"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Both sides through the plugin's gRPC adaptation (sdktest.Filter): the
// consumer's filter attaches its tenant, the provider's lets that tenant
// through and refuses none or another with BAD_REQUEST and
// spi.ErrAccessDenied, which crosses the plugin boundary.
func TestConsumerAttachesProviderRefuses(t *testing.T) {
	b := sdktest.Filter(t, tenant.Builder{})
	if a := b.Activation(); a.Key != tenant.Key || len(a.Sides) != 2 {
		t.Fatalf("activation %+v, want both sides on key %q", a, tenant.Key)
	}
	c, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&tenant=acme"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider&tenant=acme,globex"))
	if err != nil {
		t.Fatal(err)
	}
	service := spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	var sent *spi.Invocation
	wire := spi.InvokerFunc(func(ctx context.Context, inv *spi.Invocation) spi.Result {
		sent = inv
		return p.Invoke(ctx, service, inv) // the provider's chain
	})
	ctx := context.Background()
	if r := c.Invoke(ctx, wire, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); r.Err != nil || r.Value != "ran" {
		t.Fatalf("tenant acme: %v, %v; want the service's answer", r.Value, r.Err)
	}
	if got := sent.Attachment(tenant.Attachment); got != "acme" {
		t.Fatalf("attachment %q, want acme", got)
	}
	for _, who := range []string{"", "initech"} {
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
		if who != "" {
			inv.SetAttachment(tenant.Attachment, who)
		}
		r := p.Invoke(ctx, service, inv)
		if !errors.Is(r.Err, spi.ErrBadRequest) || !errors.Is(r.Err, spi.ErrAccessDenied) {
			t.Errorf("tenant %q: %v; want BAD_REQUEST with Cause ErrAccessDenied", who, r.Err)
		}
	}
}

// An empty value, or one of commas only, is a Build error, not a
// provider that lets through calls without a tenant.
func TestEmptyValueIsABuildError(t *testing.T) {
	for _, v := range []string{"", ",", " , "} {
		u := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider").With(tenant.Key, v)
		if _, err := (tenant.Builder{}).Build(u); err == nil {
			t.Errorf("tenant=%q built; want an error", v)
		}
	}
	if err := spi.ValidateKeys(tenant.Builder{}.Keys()); err != nil {
		t.Fatal(err)
	}
}

// tenant.from=certificate, through the plugin's gRPC adaptation: the
// provider's filter reads the consumer's TLS certificate
// (spi.PeerCertificate, which the host gives the plugin) and serves the
// certificates naming a listed tenant by common name or DNS name; one
// naming another tenant, and a call without a certificate, are refused
// with BAD_REQUEST and spi.ErrAccessDenied whatever tenant attachment
// they send. A value of tenant.from other than the two is a Build error.
func TestTenantFromCertificate(t *testing.T) {
	b := sdktest.Filter(t, tenant.Builder{})
	p, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider&tenant=acme,globex&tenant.from=certificate"))
	if err != nil {
		t.Fatal(err)
	}
	service := spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	cert := func(cn string, dns ...string) *x509.Certificate {
		c, err := x509.ParseCertificate(issue(t, cn, dns))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		cert *x509.Certificate
		ok   bool
		why  string
	}{
		{cert("acme"), true, ""},
		{cert("orders-7", "globex"), true, ""},
		{cert("initech", "initech.svc.example"), false, `certificate "CN=initech" (names initech, initech.svc.example) names no tenant served here`},
		{nil, false, "no client certificate (tenant.from=certificate needs mutual TLS: serve with --tls-ca)"},
	} {
		ctx := context.Background()
		if tc.cert != nil {
			ctx = spi.WithPeerCertificate(ctx, tc.cert)
		}
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
		inv.SetAttachment(tenant.Attachment, "acme") // not read: the certificate decides
		r := p.Invoke(ctx, service, inv)
		if tc.ok && (r.Err != nil || r.Value != "ran") {
			t.Errorf("%v: %v, %v; want the service's answer", tc.cert, r.Value, r.Err)
		}
		if !tc.ok && (!errors.Is(r.Err, spi.ErrBadRequest) || !errors.Is(r.Err, spi.ErrAccessDenied) || !strings.Contains(r.Err.Error(), tc.why)) {
			t.Errorf("%v: %v; want BAD_REQUEST with Cause ErrAccessDenied saying %q", tc.cert, r.Err, tc.why)
		}
	}
	_, err = b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider&tenant=acme&tenant.from=cert"))
	// the host checks a declared enum key's value before the plugin's
	// Build runs (fix-ad), in the form every declared key's check uses
	if err == nil || !strings.Contains(err.Error(), `invalid value "cert" for URL key "tenant.from": want one of attachment, certificate`) {
		t.Errorf("tenant.from=cert: %v; want a Build error naming the allowed values", err)
	}
}

// issue returns the DER of a certificate for cn and dns, self-signed.
func issue(t *testing.T, cn string, dns []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

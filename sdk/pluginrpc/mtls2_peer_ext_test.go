package pluginrpc_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/pluginrpc"
	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

// peerSeen is a filter (run in the plugin) that records the consumer
// certificate each call's context gives it and lets the call pass.
type peerSeen struct {
	mu    sync.Mutex
	certs []*x509.Certificate
}

func (p *peerSeen) Name() string { return "peerseen" }
func (p *peerSeen) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (p *peerSeen) Build(spi.URL) (spi.Filter, error) { return p, nil }
func (p *peerSeen) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	p.mu.Lock()
	p.certs = append(p.certs, spi.PeerCertificate(ctx))
	p.mu.Unlock()
	return next.Invoke(ctx, inv)
}

func (p *peerSeen) last() *x509.Certificate {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.certs[len(p.certs)-1]
}

// sentFilter records the FilterRequests the host sends.
type sentFilter struct {
	pb.FilterClient
	mu   sync.Mutex
	reqs []*pb.FilterRequest
}

func (s *sentFilter) Invoke(ctx context.Context, in *pb.FilterRequest, opts ...grpc.CallOption) (*pb.FilterReply, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, proto.Clone(in).(*pb.FilterRequest))
	s.mu.Unlock()
	return s.FilterClient.Invoke(ctx, in, opts...)
}

// take returns the requests recorded since the last take.
func (s *sentFilter) take() []*pb.FilterRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// peerCerts returns n client certificates (CN=client-i, DNS
// client-i.svc.example), parsed, signed by a throwaway CA.
func peerCerts(t testing.TB, n int) []*x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mtls2 CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	out := make([]*x509.Certificate, n)
	for i := range out {
		name := fmt.Sprintf("client-%d", i)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: name, Organization: []string{"acme"}},
			DNSNames: []string{name + ".svc.example"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = x509.ParseCertificate(der); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// recordedBuilder serves f in process and returns a host-side builder of
// it whose FilterRequests are recorded.
func recordedBuilder(t *testing.T, c *pluginrpc.Client, name string) (spi.FilterBuilder, *sentFilter) {
	rec := &sentFilter{FilterClient: c.Filter}
	cc := *c
	cc.Filter = rec
	return pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: name, Source: pluginrpc.StaticSource(&cc)}), rec
}

func buildSide(t *testing.T, b spi.FilterBuilder, side spi.Side) spi.Filter {
	t.Helper()
	f, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// mtls2: a provider-side filter plugin gets the consumer's certificate
// from spi.PeerCertificate, as an in-process filter does: the same DER,
// subject and DNS names. The host sends the DER the first time and then
// only the 32-byte SHA-256; a call without a certificate, and any call on
// the consumer side, carries no peer field at all.
func TestMTLS2FilterPluginSeesPeerCertificate(t *testing.T) {
	seen := &peerSeen{}
	c := sdktest.Connect(t, sdk.Plugins{Filter: seen}, pluginrpc.PointFilter)
	b, rec := recordedBuilder(t, c, "peerseen")
	prov, cons := buildSide(t, b, spi.Provider), buildSide(t, b, spi.Consumer)
	rec.take() // Build's
	certs := peerCerts(t, 2)
	service := spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	call := func(f spi.Filter, cert *x509.Certificate) *pb.FilterRequest {
		t.Helper()
		ctx := context.Background()
		if cert != nil {
			ctx = spi.WithPeerCertificate(ctx, cert)
		}
		if r := f.Invoke(ctx, service, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); r.Err != nil || r.Value != "ran" {
			t.Fatalf("call: %v, %v; want it passed", r.Value, r.Err)
		}
		reqs := rec.take()
		if len(reqs) != 1 {
			t.Fatalf("%d filter requests for one call, want 1", len(reqs))
		}
		return reqs[0]
	}

	for i, cert := range []*x509.Certificate{certs[0], certs[0], certs[1], certs[0], certs[1]} {
		first := i == 0 || i == 2
		req := call(prov, cert)
		got := seen.last()
		if got == nil || !bytes.Equal(got.Raw, cert.Raw) || got.Subject.String() != cert.Subject.String() ||
			len(got.DNSNames) != 1 || got.DNSNames[0] != cert.DNSNames[0] {
			t.Fatalf("call %d: the plugin's filter saw %v; want the consumer's certificate %s", i, got, cert.Subject)
		}
		fp := sha256.Sum256(cert.Raw)
		if req.Peer == nil || !bytes.Equal(req.Peer.Sha256, fp[:]) {
			t.Fatalf("call %d: peer %v; want the certificate's SHA-256", i, req.Peer)
		}
		if first != (len(req.Peer.Der) > 0) {
			t.Errorf("call %d: DER sent %v (%d bytes); want it only the first time a certificate is given", i, !first, len(req.Peer.Der))
		}
		if !first {
			t.Logf("call %d: the peer certificate costs %d bytes of the request (DER %d bytes)", i, proto.Size(req.Peer), len(cert.Raw))
		}
	}

	if req := call(prov, nil); req.Peer != nil || seen.last() != nil {
		t.Errorf("a provider call without a certificate: peer %v sent, the plugin saw %v; want nothing", req.Peer, seen.last())
	}
	if req := call(cons, certs[0]); req.Peer != nil || seen.last() != nil {
		t.Errorf("a consumer call: peer %v sent, the plugin saw %v; want nothing (a consumer has no peer certificate)", req.Peer, seen.last())
	}
}

// A plugin that dropped a certificate (it keeps at most 1024) answers
// unknown_peer to a call naming it by its SHA-256 only, and the host sends
// that call again with the DER: the filter runs once and sees it. Two
// host-side builders share one plugin here, so that one can fill the
// plugin's cache while the other still believes it holds its certificate.
func TestMTLS2FilterPluginDroppedCertificateIsSentAgain(t *testing.T) {
	seen := &peerSeen{}
	c := sdktest.Connect(t, sdk.Plugins{Filter: seen}, pluginrpc.PointFilter)
	ba, reca := recordedBuilder(t, c, "peerseen")
	bb, _ := recordedBuilder(t, c, "peerseen")
	fa, fb := buildSide(t, ba, spi.Provider), buildSide(t, bb, spi.Provider)
	certs := peerCerts(t, 1025)
	service := spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	invoke := func(f spi.Filter, cert *x509.Certificate) {
		t.Helper()
		r := f.Invoke(spi.WithPeerCertificate(context.Background(), cert), service, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		if r.Err != nil || r.Value != "ran" {
			t.Fatalf("call: %v, %v; want it passed", r.Value, r.Err)
		}
		if got := seen.last(); got == nil || !bytes.Equal(got.Raw, cert.Raw) {
			t.Fatalf("the plugin's filter saw %v; want %s", got, cert.Subject)
		}
	}
	invoke(fa, certs[0])
	invoke(fa, certs[0])
	reca.take()
	for _, cert := range certs[1:] { // fills the plugin's cache past its bound
		invoke(fb, cert)
	}
	n := len(seen.certs)
	invoke(fa, certs[0])
	reqs := reca.take()
	if len(reqs) != 2 || len(reqs[0].Peer.GetDer()) != 0 || len(reqs[1].Peer.GetDer()) == 0 {
		t.Fatalf("requests %d (DER in the first %v); want 2: by SHA-256, then again with the DER", len(reqs), len(reqs[0].Peer.GetDer()) > 0)
	}
	if len(seen.certs) != n+1 {
		t.Errorf("the filter ran %d times for one call; want once", len(seen.certs)-n)
	}
	invoke(fa, certs[0])
	if reqs := reca.take(); len(reqs) != 1 || len(reqs[0].Peer.GetDer()) != 0 {
		t.Errorf("after the resend: %d requests; want 1, by SHA-256 only", len(reqs))
	}
}

// A provider-side filter plugin call without a certificate (plain TCP)
// and with one the plugin already holds (its SHA-256 sent, the parsed
// certificate looked up): in-process gRPC, so the difference is the
// peer field's own cost.
func BenchmarkMTLS2FilterPluginPeer(b *testing.B) {
	seen := &peerSeen{}
	c := sdktest.Connect(b, sdk.Plugins{Filter: seen}, pluginrpc.PointFilter)
	fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "peerseen", Source: pluginrpc.StaticSource(c)})
	f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider"))
	if err != nil {
		b.Fatal(err)
	}
	cert := peerCerts(b, 1)[0]
	service := spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"plain", context.Background()}, {"certificate", spi.WithPeerCertificate(context.Background(), cert)}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				seen.mu.Lock()
				seen.certs = seen.certs[:0]
				seen.mu.Unlock()
				if r := f.Invoke(bc.ctx, service, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		})
	}
}

package pluginrpc

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"sync"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// A provider-side filter plugin sees the consumer's TLS client
// certificate as an in-process filter does, with spi.PeerCertificate. The
// host sends a certificate's DER once per plugin process and then only its
// SHA-256 (FilterRequest.peer); the plugin keeps the parsed certificates
// it was given (peerCache) and answers unknown_peer for one it no longer
// holds, and the host sends that call again with the DER. A call without
// a certificate (plain TCP, TLS without --tls-ca, the consumer side)
// carries no peer field at all.

// maxPeers bounds the certificates each side remembers: the host's
// fingerprints and what it sent, the plugin's parsed certificates. Past
// it a side forgets them all and starts again; that costs one DER resend
// per certificate, never a wrong answer.
const maxPeers = 1024

type fingerprint = [sha256.Size]byte

// peerSent is the host's view of one plugin's certificates: the
// fingerprint of each certificate the transports handed out (they keep
// one pointer per connection, so it is hashed once per connection, not
// per call), and which certificates the plugin process of generation gen
// has been sent.
type peerSent struct {
	mu   sync.Mutex
	fps  map[*x509.Certificate]fingerprint
	gen  uint64
	sent map[fingerprint]bool
}

// request returns the peer field of a call under mutual TLS whose
// consumer presented cert, to the plugin process of generation gen: the
// DER unless that process was already given it, or withDER.
func (p *peerSent) request(cert *x509.Certificate, gen uint64, withDER bool) *pb.PeerCertificate {
	p.mu.Lock()
	fp, ok := p.fps[cert]
	if !ok {
		fp = sha256.Sum256(cert.Raw)
		if p.fps == nil || len(p.fps) >= maxPeers {
			p.fps = make(map[*x509.Certificate]fingerprint)
		}
		p.fps[cert] = fp
	}
	if p.gen != gen {
		p.gen, p.sent = gen, nil
	}
	known := p.sent[fp]
	p.mu.Unlock()
	r := &pb.PeerCertificate{Sha256: fp[:]}
	if withDER || !known {
		r.Der = cert.Raw
	}
	return r
}

// delivered records that the plugin process of generation gen answered a
// request that carried r (with its DER): it holds that certificate now.
func (p *peerSent) delivered(r *pb.PeerCertificate, gen uint64) {
	if len(r.Der) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return // a restart since; the next call sends it again
	}
	if p.sent == nil || len(p.sent) >= maxPeers {
		p.sent = make(map[fingerprint]bool)
	}
	p.sent[fingerprint(r.Sha256)] = true
}

// peerCache is the plugin's side: the certificates the host sent, parsed
// once, by SHA-256 of their DER.
type peerCache struct {
	mu    sync.Mutex
	certs map[fingerprint]*x509.Certificate
}

// withPeer returns ctx carrying the certificate r names
// (spi.WithPeerCertificate), parsing and keeping r.Der when given;
// unknown is true when r names by fingerprint only a certificate the
// cache does not hold.
func (c *peerCache) withPeer(ctx context.Context, r *pb.PeerCertificate) (_ context.Context, unknown bool, _ error) {
	if r == nil {
		return ctx, false, nil
	}
	if len(r.Der) == 0 {
		if len(r.Sha256) != sha256.Size {
			return ctx, false, fmt.Errorf("peer certificate: fingerprint of %d bytes, want %d (SHA-256)", len(r.Sha256), sha256.Size)
		}
		c.mu.Lock()
		cert := c.certs[fingerprint(r.Sha256)]
		c.mu.Unlock()
		if cert == nil {
			return ctx, true, nil
		}
		return spi.WithPeerCertificate(ctx, cert), false, nil
	}
	fp := sha256.Sum256(r.Der)
	c.mu.Lock()
	cert := c.certs[fp]
	c.mu.Unlock()
	if cert == nil {
		var err error
		if cert, err = x509.ParseCertificate(r.Der); err != nil {
			return ctx, false, fmt.Errorf("peer certificate: %w", err)
		}
		c.mu.Lock()
		if c.certs == nil || len(c.certs) >= maxPeers {
			c.certs = make(map[fingerprint]*x509.Certificate)
		}
		c.certs[fp] = cert
		c.mu.Unlock()
	}
	return spi.WithPeerCertificate(ctx, cert), false, nil
}

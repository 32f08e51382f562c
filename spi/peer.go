package spi

import (
	"context"
	"crypto/x509"
)

// PeerCertificateKey is the context key PeerCertificate asks for. A
// provider's request context answers it from its connection (the
// kernel's exchange does, so a call costs nothing for it); others use
// WithPeerCertificate.
type PeerCertificateKey struct{}

// PeerCertificate returns the certificate the consumer of the call a
// provider is serving with ctx presented under mutual TLS (the provider's
// tls.ca), verified against that CA during the connection's handshake:
// the leaf, as gRPC's credentials.TLSInfo State.PeerCertificates[0]. nil
// without mutual TLS, on the consumer, and for a ctx that is no provider
// call's. It is read once per connection, at the handshake: asking costs
// a context lookup, and a call that does not ask pays nothing. The
// certificate is shared: read it, never modify it. A provider-side
// filter plugin (another process, sdk) asks the same way: the host gives
// its plugin processes each certificate once (DER) and then its SHA-256
// with each call, and the plugin's context answers with the parsed
// certificate; calls without one send nothing.
func PeerCertificate(ctx context.Context) *x509.Certificate {
	c, _ := ctx.Value(PeerCertificateKey{}).(*x509.Certificate)
	return c
}

// WithPeerCertificate returns ctx carrying cert as the consumer's
// certificate (PeerCertificate), for a test that calls a provider method
// or filter directly.
func WithPeerCertificate(ctx context.Context, cert *x509.Certificate) context.Context {
	return context.WithValue(ctx, PeerCertificateKey{}, cert)
}

// PeerCertifier is an optional interface of a provider's Session (and of
// the net.Conn a transport serves it over) under mutual TLS:
// PeerCertificate returns the consumer's verified leaf certificate once
// the handshake has succeeded, else nil (no TLS, no client certificate,
// handshake not done yet). It must not block, and is safe for concurrent
// use; the exchange asks it only when a provider call asks for
// PeerCertificate, never per call.
type PeerCertifier interface {
	PeerCertificate() *x509.Certificate
}

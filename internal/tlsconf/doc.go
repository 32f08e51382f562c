// Package tlsconf builds the *tls.Config of a transport from URL keys and
// wraps its connections, for the smux and tcp transports (issue 8).
//
//	key               type    default  meaning
//	tls               bool    false    TLS on the channel (TLS 1.2 or later)
//	tls.cert          path    -        PEM certificate chain: the provider's (required with
//	                                   tls=true), or the consumer's client certificate
//	tls.key           path    -        PEM private key of tls.cert (required with it)
//	tls.ca            path    -        PEM CA bundle: on the provider, clients must present a
//	                                   certificate it signed (mutual TLS); on the consumer, the
//	                                   roots the provider's certificate is checked against
//	                                   (default: the system roots)
//	tls.servername    string  host     the name the consumer checks the provider's certificate
//	                                   against (default: the host it dials)
//	tls.client.names  string  -        provider, with tls.ca: comma-separated names a consumer's
//	                                   certificate must hold, each exact or *.suffix, matched
//	                                   against its DNS names and common name (AllowedName);
//	                                   another is refused at the handshake (NameNotAllowedError)
//
// Under mutual TLS a consumer's certificate is accepted when it chains to
// tls.ca, is valid now, and either has no extended key usage or lists
// clientAuth (or any): Go's crypto/tls checks ExtKeyUsageClientAuth, so a
// certificate marked for serverAuth only is refused, but one without the
// extension passes. Without tls.client.names any such certificate is
// accepted: the CA, not the name, authenticates. A provider reads the
// accepted certificate with spi.PeerCertificate (serverConn implements
// spi.PeerCertifier: the leaf is kept once, at the handshake).
//
// On a URL, tls.* keys without tls=true are an error (Parse): a
// forgotten tls=true would leave the channel in clear text. A consumer
// that finds its providers through a registry may still give its own
// (tls.ca, tls.servername, a client tls.cert and tls.key) without tls:
// each provider's published tls=true completes them in the merged URL,
// and the kernel refuses a provider that publishes none
// (kernel.CheckConsumerKeys, kernel.CheckProviderTLS).
//
// Parse only reads and checks the keys (pure, for a transport's Build);
// Settings.Server and Settings.Client read the files, with errors naming
// the key and the file. Listener makes accepted connections handshake on
// first use within a deadline; Handshake runs the consumer's handshake
// within the dial context, so a TLS consumer facing a plaintext provider
// fails within its connect timeout, never hangs. Everything is safe for
// concurrent use; a Listener's connections own no goroutine beyond the
// handshake's own context watcher.
package tlsconf

package tlsconf

import "github.com/airnode/airnode/spi"

// Keys describes the TLS keys Parse reads, for the transports that use
// them (smux, tcp) to declare as theirs (spi.KeyDescriber).
func Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: KeyTLS, Type: spi.KeyTypeBool, Default: "false", Doc: "TLS 1.2+ on the channel; the other tls.* keys need tls=true"},
		{Key: KeyCert, Type: spi.KeyTypePath, Doc: "PEM certificate chain: the provider's (required with tls=true), or the consumer's client certificate"},
		{Key: KeyKey, Type: spi.KeyTypePath, Doc: "PEM private key of tls.cert (required with it)"},
		{Key: KeyCA, Type: spi.KeyTypePath, Doc: "PEM CA bundle: provider: clients must present a certificate it signed (mutual TLS); consumer: roots for the provider's certificate (default the system's)"},
		{Key: KeyClientNames, Type: spi.KeyTypeString, Doc: "provider, with tls.ca: comma-separated names a consumer's certificate must hold (a DNS name or the common name; exact, or *.suffix); others are refused at the handshake. Default: any certificate tls.ca signed"},
		{Key: KeyServerName, Type: spi.KeyTypeString, Doc: "consumer: the name the provider's certificate is checked against (default the dialed host)"},
	}
}

package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/spi"
)

// URL keys.
const (
	KeyTLS        = "tls"
	KeyCert       = "tls.cert"
	KeyKey        = "tls.key"
	KeyCA         = "tls.ca"
	KeyServerName = "tls.servername"
	// KeyClientNames lists the names a consumer's certificate must hold
	// under mutual TLS (ClientNames).
	KeyClientNames = "tls.client.names"
)

// ProviderFileKeys name the provider's own files, and the names it
// allows its consumers' certificates. The kernel leaves them out of the
// provider URL it registers: merged into a consumer's URL the files
// would make the provider's key the consumer's client certificate, and
// the allowed names are the provider's business only.
var ProviderFileKeys = []string{KeyCert, KeyKey, KeyCA, KeyClientNames}

// DefaultHandshakeTimeout bounds a provider-side handshake (Listener).
const DefaultHandshakeTimeout = 10 * time.Second

// Settings are the TLS keys of one URL. The zero value means TLS off.
type Settings struct {
	Enabled    bool
	Cert, Key  string // file paths; both or neither
	CA         string // file path, optional
	ServerName string // consumer: overrides the dialed host
	// ClientNames (tls.client.names, provider, needs CA): a consumer's
	// certificate must hold one of these names (AllowedName), else its
	// handshake fails. Empty: any certificate CA signed.
	ClientNames []string
}

// PairError is Parse's error for a URL with one half of the certificate
// pair: tls.cert without tls.key or the reverse. It reads
// `tlsconf: tls.cert="srv.pem" and tls.key="": give both or neither`; a
// command line that knows which flag set the half given names the flags
// instead (Given, Missing).
type PairError struct {
	Cert, Key string // the two values; exactly one is ""
}

func (e *PairError) Error() string {
	return fmt.Sprintf("tlsconf: %s=%q and %s=%q: give both or neither", KeyCert, e.Cert, KeyKey, e.Key)
}

// Given is the key of the half that was given (KeyCert or KeyKey);
// Missing the other one.
func (e *PairError) Given() string {
	if e.Cert != "" {
		return KeyCert
	}
	return KeyKey
}

// Missing is the key of the half that is not set: KeyKey when only
// tls.cert was given, else KeyCert.
func (e *PairError) Missing() string {
	if e.Cert != "" {
		return KeyKey
	}
	return KeyCert
}

// Parse reads u's tls keys without touching the files. Errors: a
// malformed tls; tls.cert without tls.key or the reverse; tls.* keys set
// while tls is absent or false (a forgotten tls=true would otherwise leave
// the channel in clear text).
func Parse(u spi.URL) (Settings, error) {
	on, err := u.Bool(KeyTLS, false)
	if err != nil {
		return Settings{}, fmt.Errorf("tlsconf: %w", err)
	}
	s := Settings{Enabled: on}
	s.Cert, _ = u.Param(KeyCert)
	s.Key, _ = u.Param(KeyKey)
	s.CA, _ = u.Param(KeyCA)
	s.ServerName, _ = u.Param(KeyServerName)
	if !on {
		for _, k := range []string{KeyCert, KeyKey, KeyCA, KeyServerName, KeyClientNames} {
			if _, ok := u.Param(k); ok {
				return Settings{}, fmt.Errorf("tlsconf: %s is set but %s is not true: set %s=true or remove %s", k, KeyTLS, KeyTLS, k)
			}
		}
		return Settings{}, nil
	}
	if (s.Cert == "") != (s.Key == "") {
		return Settings{}, &PairError{Cert: s.Cert, Key: s.Key}
	}
	if v, ok := u.Param(KeyClientNames); ok {
		if s.ClientNames, err = parseClientNames(v); err != nil {
			return Settings{}, err
		}
	}
	return s, nil
}

// parseClientNames splits a tls.client.names value: comma-separated
// names, each a DNS name or common name matched exactly (ignoring case),
// or "*.suffix", any name ending in ".suffix".
func parseClientNames(v string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		rest, wild := strings.CutPrefix(n, "*.")
		if n == "" || rest == "" || strings.ContainsAny(rest, "*, ") {
			return nil, fmt.Errorf("tlsconf: %s=%q: %q is not a name: give comma-separated names, each exact (orders.example) or *.suffix (*.internal.example), matched against the consumer certificate's DNS names and common name",
				KeyClientNames, v, n)
		}
		if wild {
			n = "*." + rest
		}
		names = append(names, n)
	}
	return names, nil
}

// AllowedName reports whether cert holds a name that names allows
// (tls.client.names): one of its DNS names, or its subject common name,
// equal to a name (ignoring case), or ending in ".suffix" for a name
// "*.suffix" (any depth: *.example allows a.b.example, not example
// itself).
func AllowedName(cert *x509.Certificate, names []string) bool {
	for _, n := range names {
		for _, have := range cert.DNSNames {
			if nameMatches(n, have) {
				return true
			}
		}
		if cert.Subject.CommonName != "" && nameMatches(n, cert.Subject.CommonName) {
			return true
		}
	}
	return false
}

func nameMatches(pattern, name string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok { // ".suffix"
		return len(name) > len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix)
	}
	return strings.EqualFold(pattern, name)
}

// Identity names cert for a log line: its subject common name ("CN=orders"),
// else its first DNS name ("DNS:orders.example"), else its first URI
// ("URI:spiffe://..."), else its whole subject.
func Identity(cert *x509.Certificate) string {
	switch {
	case cert.Subject.CommonName != "":
		return "CN=" + cert.Subject.CommonName
	case len(cert.DNSNames) > 0:
		return "DNS:" + cert.DNSNames[0]
	case len(cert.URIs) > 0:
		return "URI:" + cert.URIs[0].String()
	}
	return cert.Subject.String()
}

// certNames lists what AllowedName compares of cert, for an error.
func certNames(cert *x509.Certificate) string {
	var out []string
	if cert.Subject.CommonName != "" {
		out = append(out, "CN="+cert.Subject.CommonName)
	}
	for _, n := range cert.DNSNames {
		out = append(out, "DNS:"+n)
	}
	if len(out) == 0 {
		return "no DNS name and no common name (subject " + strconv.Quote(cert.Subject.String()) + ")"
	}
	return strings.Join(out, ", ")
}

// NameNotAllowedError is the handshake error of a consumer whose
// certificate, signed by the provider's tls.ca, holds no name its
// tls.client.names allows.
type NameNotAllowedError struct {
	Cert    *x509.Certificate
	Allowed []string
}

// Error names the certificate's names and the allowed ones.
func (e *NameNotAllowedError) Error() string {
	return fmt.Sprintf("the consumer's certificate (%s) holds no name %s allows (%s); the consumer was refused",
		certNames(e.Cert), KeyClientNames, strings.Join(e.Allowed, ", "))
}

// Server returns the provider's config: its certificate (tls.cert and
// tls.key, required) and, with tls.ca, mutual TLS (clients must present a
// certificate signed by that CA). Reads the files; errors name the key and
// the file.
func (s Settings) Server() (*tls.Config, error) {
	if s.Cert == "" {
		return nil, fmt.Errorf("tlsconf: a provider with %s=true needs %s and %s", KeyTLS, KeyCert, KeyKey)
	}
	cert, err := s.keyPair()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if s.CA != "" {
		pool, err := loadPool(s.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if len(s.ClientNames) > 0 {
		if s.CA == "" {
			return nil, fmt.Errorf("tlsconf: %s=%s needs %s (mutual TLS): without it no consumer presents a certificate to check",
				KeyClientNames, strings.Join(s.ClientNames, ","), KeyCA)
		}
		names := s.ClientNames
		// After the chain is verified (tls.ca, ExtKeyUsageClientAuth):
		// Go's server sends the consumer "bad certificate".
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return nil // RequireAndVerifyClientCert refused it already
			}
			if leaf := cs.PeerCertificates[0]; !AllowedName(leaf, names) {
				return &NameNotAllowedError{Cert: leaf, Allowed: names}
			}
			return nil
		}
	}
	return cfg, nil
}

// Client returns the consumer's config: roots from tls.ca (else the
// system's), a client certificate from tls.cert and tls.key when given,
// and tls.servername as ServerName (Handshake fills in the dialed host
// when it is empty). When the provider requests a client certificate and
// there is none, or the provider's acceptable CAs do not include its
// issuer, the consumer's handshake fails with an error saying so. Reads the files; errors name the key and the file.
func (s Settings) Client() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
	var cert *tls.Certificate
	if s.Cert != "" {
		c, err := s.keyPair()
		if err != nil {
			return nil, err
		}
		cert = &c
	}
	// Fail the consumer's own handshake when the provider asks for a
	// certificate it lacks or will not accept: under TLS 1.3 the provider's
	// verdict would otherwise only arrive with the first read.
	cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if cert == nil {
			return nil, fmt.Errorf("the provider requires a client certificate (mutual TLS): set %s and %s", KeyCert, KeyKey)
		}
		if err := cri.SupportsCertificate(cert); err != nil {
			return nil, fmt.Errorf("the provider does not accept %s=%s: %w", KeyCert, s.Cert, err)
		}
		return cert, nil
	}
	if s.CA != "" {
		pool, err := loadPool(s.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

func (s Settings) keyPair() (tls.Certificate, error) {
	certPEM, err := os.ReadFile(s.Cert)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: %s: %w", KeyCert, err)
	}
	keyPEM, err := os.ReadFile(s.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: %s: %w", KeyKey, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: %s=%s with %s=%s: %w", KeyCert, s.Cert, KeyKey, s.Key, err)
	}
	return cert, nil
}

func loadPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %s: %w", KeyCA, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsconf: %s=%s: no PEM certificate in the file", KeyCA, path)
	}
	return pool, nil
}

// Handshake runs the consumer side of a TLS handshake on c, which was
// dialed to addr, and gives up when ctx ends (the dial's connect.timeout)
// by closing c. cfg's ServerName, when empty, becomes addr's host. On
// failure c is closed and the error says what to check.
func Handshake(ctx context.Context, c net.Conn, cfg *tls.Config, addr string) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, fmt.Errorf("tlsconf: handshake with %s: %w: the provider closed the connection during the TLS handshake: "+
				"it serves clear text (its URL in the registry has no tls=true; remove %s=true, or serve it with tls.cert and tls.key), "+
				"or it refused the connection (at its connection limit: its log says so)", addr, err, KeyTLS)
		}
		if why := Explain(err); why != "" {
			return nil, fmt.Errorf("tlsconf: handshake with %s: %s: %w", addr, why, err)
		}
		return nil, fmt.Errorf("tlsconf: handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// Explain says, for a consumer, what a TLS failure err means and what to
// do, or returns "" when err is no TLS failure it knows. It reads the
// consumer's own verdict on the provider's certificate (x509: unknown
// authority, expired, another host) and the provider's verdict on the
// consumer's, which arrives as an alert ("remote error: tls: ...", under
// TLS 1.3 only with the first read after the handshake, so also in the
// text of a failed first ping).
func Explain(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
	)
	switch {
	case errors.As(err, &unknown):
		return "the provider's certificate is signed by a CA this consumer does not trust: give that CA's certificate with " + KeyCA + "=FILE (airnode call, bench, health: -p " + KeyCA + "=FILE; default: the system's roots)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "the provider's certificate (its " + KeyCert + ") has expired or is not valid yet: the provider must renew it"
	case errors.As(err, &hostname):
		return "the provider's certificate does not name the address dialed: set " + KeyServerName + " to a name it holds, or dial a name it holds"
	}
	msg := err.Error()
	i := strings.Index(msg, "remote error: tls: ")
	if i < 0 {
		return ""
	}
	alert := msg[i+len("remote error: tls: "):]
	if j := strings.IndexAny(alert, ")\n"); j >= 0 {
		alert = alert[:j]
	}
	switch alert {
	case "expired certificate":
		return "the provider rejected this consumer's certificate (" + KeyCert + "): expired certificate: renew it"
	case "bad certificate":
		return "the provider rejected this consumer's certificate (" + KeyCert + "): " + alert + ": it must be signed by a CA in the provider's " + KeyCA +
			", be valid now, be usable for client authentication (no extended key usage, or clientAuth), and hold a name the provider's " + KeyClientNames +
			" allows when it sets that key (the provider's log names the certificate and why)"
	case "unknown certificate authority", "unsupported certificate", "revoked certificate", "certificate unknown":
		return "the provider rejected this consumer's certificate (" + KeyCert + "): " + alert + ": it must be signed by a CA in the provider's " + KeyCA + " and be valid now"
	case "certificate required":
		return "the provider requires a client certificate (mutual TLS): set " + KeyCert + " and " + KeyKey
	}
	return "the provider refused this consumer's TLS handshake: " + alert
}

// Listener returns a listener whose connections are TLS server
// connections with cfg. Each one runs its handshake on its first Read or
// Write, bounded by timeout (DefaultHandshakeTimeout when 0); a failed
// handshake closes the connection, is reported to report with the peer's
// address (nil: a Warn line on lg, bounded per kind of failure and naming
// the consumer's certificate; a transport passes the node's logger, which
// it has from spi.LoggerUser; a nil lg means slog.Default()), and fails
// that Read or Write. Accept itself never waits for a handshake, so one
// slow consumer delays no other.
func Listener(l net.Listener, cfg *tls.Config, timeout time.Duration, lg *slog.Logger, report func(remote string, err error)) net.Listener {
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	if lg == nil {
		lg = slog.Default()
	}
	return &listener{Listener: l, cfg: cfg, timeout: timeout, log: lg.With("component", "tls"), report: report}
}

type listener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
	log     *slog.Logger // the default report's
	report  func(string, error)
	limits  ratelog.Limiter // bounds the default report's lines
}

// warn is the default report of a failed handshake: a Warn line on
// the listener's logger, bounded per kind of failure (ratelog: the first, then
// one per doubling up to 1,024, then one every 10 s, with suppressed and
// in_burst), so a consumer whose certificate is rejected and that redials
// every 0.5 s makes about 11 lines in its first 10 minutes, not 1,200.
// The line names the consumer's certificate (peer_subject, peer_issuer)
// when it sent one, and says why (hint) when the failure alone does not.
func (l *listener) warn(remote string, err error, tc *tls.Conn) {
	lg := l.log
	if !lg.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	ok, suppressed, n := l.limits.Allow(ratelog.Class(err.Error()), time.Now())
	if !ok {
		return
	}
	attrs := []any{"consumer", remote, "err", err} // a listener's peer: the consumer
	if cert := peerCertificate(err, tc); cert != nil {
		attrs = append(attrs, "peer_subject", cert.Subject.String(), "peer_issuer", cert.Issuer.String())
		if len(cert.DNSNames) > 0 {
			attrs = append(attrs, "peer_dns", strings.Join(cert.DNSNames, ","))
		}
	}
	if h := serverHint(err, l.cfg); h != "" {
		attrs = append(attrs, "hint", h)
	}
	lg.Warn("TLS handshake failed; connection closed", ratelog.Attrs(attrs, suppressed, n)...)
}

// peerCertificate returns the certificate the consumer presented on a
// failed handshake: the unverified one when verification failed, else
// the one the connection holds; nil when it sent none.
func peerCertificate(err error, tc *tls.Conn) *x509.Certificate {
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) && len(ve.UnverifiedCertificates) > 0 {
		return ve.UnverifiedCertificates[0]
	}
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		return certs[0]
	}
	return nil
}

// serverHint says what a provider-side handshake failure err means when
// err alone (EOF, a reset, a TLS alert) does not: Go consumers hang up
// without an alert when they lack the certificate mutual TLS asks for, or
// hold one from a CA outside the provider's tls.ca; and they send "bad
// certificate" for every provider certificate they reject. "" when err
// says it already.
func serverHint(err error, cfg *tls.Config) string {
	msg := err.Error()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		if cfg.ClientAuth == tls.RequireAndVerifyClientCert {
			return "the consumer hung up during the handshake: under mutual TLS (" + KeyCA + ") a consumer without " + KeyCert +
				", or with a certificate from a CA that " + KeyCA + " does not hold, does so (its own error says which); else it is not a TLS client, or a port check"
		}
		return "the consumer hung up during the handshake: not a TLS client, a port check, or a consumer that gave up (its connect.timeout)"
	case strings.Contains(msg, "remote error: tls: bad certificate"), strings.Contains(msg, "remote error: tls: unknown certificate authority"),
		strings.Contains(msg, "remote error: tls: certificate expired"), strings.Contains(msg, "remote error: tls: expired certificate"):
		return "the consumer rejected this provider's certificate (" + KeyCert + "): expired? not naming the address the consumer dialed? signed by a CA outside the consumer's " + KeyCA + "? the consumer's error says which"
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the consumer speaks clear text: it needs " + KeyTLS + "=true (through a registry it takes it from this provider's URL unless it sets " + KeyTLS + "=false)"
	}
	return ""
}

// Accept returns the next connection, wrapped.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &serverConn{Conn: tls.Server(c, l.cfg), raw: c, l: l}, nil
}

// serverConn handshakes once, on first use, within the listener's timeout.
type serverConn struct {
	*tls.Conn
	raw  net.Conn
	l    *listener
	once sync.Once
	err  error
	peer atomic.Pointer[x509.Certificate] // the consumer's verified leaf, set by a handshake that succeeded
}

// PeerCertificate returns the consumer's verified certificate once the
// handshake has succeeded under mutual TLS, else nil (spi.PeerCertifier).
// It never blocks.
func (c *serverConn) PeerCertificate() *x509.Certificate { return c.peer.Load() }

func (c *serverConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.l.timeout)
		defer cancel()
		if err := c.Conn.HandshakeContext(ctx); err != nil {
			c.err = fmt.Errorf("tlsconf: handshake with %s: %w", c.raw.RemoteAddr(), err)
			_ = c.raw.Close()
			if errors.Is(err, net.ErrClosed) {
				// This side closed the connection during the handshake (a
				// provider refusing it at its connection limit, accepts,
				// or shutting down): not the peer's failure, and a line
				// per refused connection would flood the log.
				return
			}
			countFailure(err)
			if c.l.report != nil {
				c.l.report(c.raw.RemoteAddr().String(), err)
			} else {
				c.l.warn(c.raw.RemoteAddr().String(), err, c.Conn)
			}
			return
		}
		if certs := c.Conn.ConnectionState().PeerCertificates; len(certs) > 0 {
			c.peer.Store(certs[0])
		}
	})
	return c.err
}

// countFailure counts a provider's failed handshake by cause
// (counters.TLS: airnode_tls_handshake_failures_total).
func countFailure(err error) {
	var (
		names *NameNotAllowedError
		ve    *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &names):
		counters.TLS.ClientNames.Inc()
	case errors.As(err, &ve):
		counters.TLS.Certificate.Inc()
	case strings.Contains(err.Error(), "client didn't provide a certificate"):
		counters.TLS.NoCertificate.Inc()
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		counters.TLS.HungUp.Inc()
	default:
		counters.TLS.Other.Inc()
	}
}

// Read handshakes on first use, then reads.
func (c *serverConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

// Write handshakes on first use, then writes.
func (c *serverConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

var (
	_ net.Listener      = (*listener)(nil)
	_ spi.PeerCertifier = (*serverConn)(nil)
)

// CertCheck is what a provider's certificate looks like to the consumers
// that dial a host (CheckServerCert).
type CertCheck struct {
	// NotBefore and NotAfter bound the leaf certificate's validity.
	NotBefore, NotAfter time.Time
	// Expired: now is after NotAfter; NotYetValid: before NotBefore.
	// Consumers reject the certificate either way.
	Expired, NotYetValid bool
	// Names are the leaf's subject alternative names (DNS names, then IP
	// addresses), in the certificate's order.
	Names []string
	// NamesHost: the leaf is valid for host (x509's VerifyHostname:
	// an IP address must be an IP SAN, a name a DNS SAN or wildcard).
	// Consumers that dial host and set no tls.servername reject it
	// otherwise.
	NamesHost bool
}

// CheckServerCert reads the first certificate of the PEM file certFile
// (a provider's tls.cert) and says whether consumers dialing host would
// accept it at now: its validity period and its names. It does not check
// the chain (the consumers' tls.ca decides that). Errors name the key and
// the file.
func CheckServerCert(certFile, host string, now time.Time) (CertCheck, error) {
	data, err := os.ReadFile(certFile)
	if err != nil {
		return CertCheck{}, fmt.Errorf("tlsconf: %s: %w", KeyCert, err)
	}
	var leaf *x509.Certificate
	for len(data) > 0 && leaf == nil {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			if leaf, err = x509.ParseCertificate(b.Bytes); err != nil {
				return CertCheck{}, fmt.Errorf("tlsconf: %s=%s: %w", KeyCert, certFile, err)
			}
		}
	}
	if leaf == nil {
		return CertCheck{}, fmt.Errorf("tlsconf: %s=%s: no PEM certificate in the file", KeyCert, certFile)
	}
	c := CertCheck{NotBefore: leaf.NotBefore, NotAfter: leaf.NotAfter,
		Expired: now.After(leaf.NotAfter), NotYetValid: now.Before(leaf.NotBefore),
		NamesHost: leaf.VerifyHostname(host) == nil}
	c.Names = append(c.Names, leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		c.Names = append(c.Names, ip.String())
	}
	return c, nil
}

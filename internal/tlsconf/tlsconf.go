package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/airnode/airnode/spi"
)

// URL keys.
const (
	KeyTLS        = "tls"
	KeyCert       = "tls.cert"
	KeyKey        = "tls.key"
	KeyCA         = "tls.ca"
	KeyServerName = "tls.servername"
)

// ProviderFileKeys name the provider's own files. The kernel leaves them
// out of the provider URL it registers: merged into a consumer's URL they
// would make the provider's key the consumer's client certificate.
var ProviderFileKeys = []string{KeyCert, KeyKey, KeyCA}

// DefaultHandshakeTimeout bounds a provider-side handshake (Listener).
const DefaultHandshakeTimeout = 10 * time.Second

// Settings are the TLS keys of one URL. The zero value means TLS off.
type Settings struct {
	Enabled    bool
	Cert, Key  string // file paths; both or neither
	CA         string // file path, optional
	ServerName string // consumer: overrides the dialed host
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
		for _, k := range []string{KeyCert, KeyKey, KeyCA, KeyServerName} {
			if _, ok := u.Param(k); ok {
				return Settings{}, fmt.Errorf("tlsconf: %s is set but %s is not true: set %s=true or remove %s", k, KeyTLS, KeyTLS, k)
			}
		}
		return Settings{}, nil
	}
	if (s.Cert == "") != (s.Key == "") {
		return Settings{}, fmt.Errorf("tlsconf: %s=%q and %s=%q: give both or neither", KeyCert, s.Cert, KeyKey, s.Key)
	}
	return s, nil
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
			return nil, fmt.Errorf("tlsconf: handshake with %s: %w (is the provider serving TLS?)", addr, err)
		}
		return nil, fmt.Errorf("tlsconf: handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// Listener returns a listener whose connections are TLS server
// connections with cfg. Each one runs its handshake on its first Read or
// Write, bounded by timeout (DefaultHandshakeTimeout when 0); a failed
// handshake closes the connection, is reported to report with the peer's
// address (nil: a warning on slog.Default()), and fails that Read or
// Write. Accept itself
// never waits for a handshake, so one slow consumer delays no other.
func Listener(l net.Listener, cfg *tls.Config, timeout time.Duration, report func(remote string, err error)) net.Listener {
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	return &listener{Listener: l, cfg: cfg, timeout: timeout, report: report}
}

type listener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
	report  func(string, error)
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
}

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
			if c.l.report != nil {
				c.l.report(c.raw.RemoteAddr().String(), err)
			} else {
				slog.Default().Warn("tlsconf: handshake failed; connection closed", "remote", c.raw.RemoteAddr().String(), "err", err)
			}
		}
	})
	return c.err
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

var _ net.Listener = (*listener)(nil)

// Package tlsconftest makes throwaway certificate authorities and
// certificates for tests, written as PEM files under a test's temporary
// directory (keys are never committed). ECDSA P-256, valid from an hour ago
// for an hour; leaf certificates name 127.0.0.1, ::1, localhost and
// provider.test (IssueFor: the hosts given).
package tlsconftest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority whose certificate is at CertFile.
type CA struct {
	// CertFile is the PEM file of the CA certificate (for tls.ca).
	CertFile string
	dir      string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
}

var serial atomic.Int64

// NewCA returns a new CA named name, its files in t.TempDir().
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{dir: t.TempDir(), cert: cert, key: key}
	ca.CertFile = ca.write(t, "ca.pem", "CERTIFICATE", der)
	return ca
}

// Issue returns the PEM files of a new certificate named name and of its
// key, signed by ca, usable for both server and client authentication.
func (ca *CA) Issue(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, name, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
}

// IssueExpired is Issue for a certificate that expired a day ago (valid
// for the day before).
func (ca *CA) IssueExpired(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, name, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
}

// IssueFor is Issue for a certificate naming only hosts (IP addresses
// and DNS names), for a provider whose certificate does not name the
// address it is dialed at.
func (ca *CA) IssueFor(t testing.TB, name string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	return ca.issueFor(t, name, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), hosts)
}

func (ca *CA) issue(t testing.TB, name string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	return ca.issueFor(t, name, notBefore, notAfter, []string{"127.0.0.1", "::1", "localhost", "provider.test"})
}

// IssueUsage is IssueFor for a certificate whose extended key usages are
// exactly usages (none when empty), for a client certificate that is, or
// is not, marked for client authentication.
func (ca *CA) IssueUsage(t testing.TB, name string, usages []x509.ExtKeyUsage, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	if usages == nil {
		usages = []x509.ExtKeyUsage{}
	}
	return ca.issueWith(t, name, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), hosts, usages)
}

func (ca *CA) issueFor(t testing.TB, name string, notBefore, notAfter time.Time, hosts []string) (certFile, keyFile string) {
	t.Helper()
	return ca.issueWith(t, name, notBefore, notAfter, hosts, nil)
}

// issueWith issues a certificate; usages nil means both server and
// client authentication.
func (ca *CA) issueWith(t testing.TB, name string, notBefore, notAfter time.Time, hosts []string, usages []x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	if usages == nil {
		usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usages,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return ca.write(t, name+".pem", "CERTIFICATE", der), ca.write(t, name+"-key.pem", "EC PRIVATE KEY", kder)
}

// Write writes a PEM block into the CA's directory and returns its path.
func (ca *CA) write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

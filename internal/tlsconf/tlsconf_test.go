package tlsconf

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustParse(t *testing.T, u string) Settings {
	t.Helper()
	s, err := Parse(spi.MustParse(u))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParse(t *testing.T) {
	if s := mustParse(t, "airnode://h:1/s"); s.Enabled {
		t.Error("TLS on without tls=true")
	}
	s := mustParse(t, "airnode://h:1/s?tls=true&tls.ca=/a&tls.servername=x")
	if !s.Enabled || s.CA != "/a" || s.ServerName != "x" {
		t.Errorf("%+v", s)
	}
	for q, want := range map[string]string{
		"tls=yes":                `"tls"`,
		"tls.cert=/c&tls.key=/k": "tls.cert is set but tls is not true",
		"tls=false&tls.ca=/a":    "tls.ca is set but tls is not true",
		"tls=true&tls.cert=/c":   "give both or neither",
		"tls=true&tls.key=/k":    "give both or neither",
	} {
		_, err := Parse(spi.MustParse("airnode://h:1/s?" + q))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "tlsconf: ") {
			t.Errorf("%s: err = %v, want %q", q, err, want)
		}
	}
}

func TestFileErrorsNameKeyAndFile(t *testing.T) {
	ca := tlsconftest.NewCA(t, "ca")
	cert, key := ca.Issue(t, "p")
	missing := filepath.Join(t.TempDir(), "nope.pem")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		s    Settings
		want []string
	}{
		{Settings{Enabled: true}, []string{"tls.cert", "tls.key", "provider"}},
		{Settings{Enabled: true, Cert: missing, Key: key}, []string{"tls.cert", missing}},
		{Settings{Enabled: true, Cert: cert, Key: missing}, []string{"tls.key", missing}},
		{Settings{Enabled: true, Cert: key, Key: cert}, []string{"tls.cert=" + key, "tls.key=" + cert}},
		{Settings{Enabled: true, Cert: cert, Key: key, CA: missing}, []string{"tls.ca", missing}},
		{Settings{Enabled: true, Cert: cert, Key: key, CA: garbage}, []string{"tls.ca=" + garbage, "no PEM certificate"}},
	}
	for _, c := range cases {
		_, err := c.s.Server()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Server(%+v): err = %v, want %q", c.s, err, w)
			}
		}
	}
	if _, err := (Settings{Enabled: true, CA: missing}).Client(); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Client with a missing CA: %v", err)
	}
}

// echoServer accepts TLS connections on loopback and echoes each one.
type echoServer struct {
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	reports []string
}

func startEcho(t *testing.T, cfg *tls.Config) *echoServer {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{}
	startEchoOn(t, s, Listener(raw, cfg, 2*time.Second, nil, func(remote string, err error) {
		s.mu.Lock()
		s.reports = append(s.reports, err.Error())
		s.mu.Unlock()
	}))
	return s
}

// startEchoOn serves ln on s: each connection echoes what it reads.
func startEchoOn(t *testing.T, s *echoServer, ln net.Listener) {
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() { s.ln.Close(); s.wg.Wait() })
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) reported() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.reports, "\n")
}

func dial(t *testing.T, addr string, cfg *tls.Config) (net.Conn, error) {
	t.Helper()
	// generous: a handshake under -race on a loaded machine took over 3 s
	// (the untrusted provider case failed "context deadline exceeded")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return Handshake(ctx, c, cfg, addr)
}

func roundTrip(c net.Conn) error {
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	b := make([]byte, 4)
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadFull(c, b); err != nil {
		return err
	}
	if string(b) != "ping" {
		return errors.New("echo mismatch")
	}
	return nil
}

func TestMutualTLS(t *testing.T) {
	ca, other := tlsconftest.NewCA(t, "airnode test CA"), tlsconftest.NewCA(t, "other CA")
	pCert, pKey := ca.Issue(t, "provider")
	cCert, cKey := ca.Issue(t, "consumer")
	xCert, xKey := other.Issue(t, "stranger")
	srvCfg, err := mustParse(t, "airnode://127.0.0.1:0/s?tls=true&tls.cert="+pCert+"&tls.key="+pKey+"&tls.ca="+ca.CertFile).Server()
	if err != nil {
		t.Fatal(err)
	}
	if srvCfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatal("tls.ca on the provider does not require client certificates")
	}
	srv := startEcho(t, srvCfg)

	client := func(q string) *tls.Config {
		cfg, err := mustParse(t, "airnode://127.0.0.1:1/s?tls=true&tls.ca="+ca.CertFile+q).Client()
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	// The right certificate: the call goes through.
	c, err := dial(t, srv.addr(), client("&tls.cert="+cCert+"&tls.key="+cKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// tls.servername checks another name of the certificate.
	if c, err = dial(t, srv.addr(), client("&tls.servername=provider.test&tls.cert="+cCert+"&tls.key="+cKey)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err = dial(t, srv.addr(), client("&tls.servername=elsewhere.test&tls.cert="+cCert+"&tls.key="+cKey)); err == nil || !strings.Contains(err.Error(), "elsewhere.test") {
		t.Errorf("wrong server name: %v", err)
	}

	for name, cfg := range map[string]*tls.Config{
		"no certificate":            client(""),
		"certificate of another CA": client("&tls.cert=" + xCert + "&tls.key=" + xKey),
	} {
		start := time.Now()
		_, err := dial(t, srv.addr(), cfg)
		if err == nil || !strings.Contains(err.Error(), "tlsconf: ") || time.Since(start) > 3*time.Second {
			t.Errorf("%s: err = %v after %v", name, err, time.Since(start))
		}
		t.Logf("%s: %v", name, err)
	}
	// A consumer that does not trust the provider's CA.
	if _, err := dial(t, srv.addr(), &tls.Config{MinVersion: tls.VersionTLS12}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted provider: %v", err)
	}
}

// A plaintext consumer on a TLS port: the provider closes the connection
// within its handshake timeout and reports why; the consumer's read ends.
func TestPlaintextConsumerOnTLSProvider(t *testing.T) {
	ca := tlsconftest.NewCA(t, "ca")
	pCert, pKey := ca.Issue(t, "provider")
	cfg, err := (Settings{Enabled: true, Cert: pCert, Key: pKey}).Server()
	if err != nil {
		t.Fatal(err)
	}
	srv := startEcho(t, cfg)
	c, err := net.Dial("tcp", srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, _ = c.Write([]byte{0xA1, 0x7E, 0xC1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(c)
	if err != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("plaintext consumer: read ended with %v after %v, want the connection closed at once", err, time.Since(start))
	}
	deadline := time.Now().Add(3 * time.Second)
	for srv.reported() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if r := srv.reported(); !strings.Contains(r, "tls") {
		t.Errorf("provider reported %q", r)
	}
}

// A TLS consumer facing a plaintext provider that never answers fails
// within its dial deadline; one whose provider closes fails at once, with a
// hint.
func TestTLSConsumerOnPlaintextProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	conns := make(chan net.Conn, 4)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	defer func() {
		ln.Close()
		wg.Wait()
		close(conns)
		for c := range conns {
			c.Close()
		}
	}()
	cfg, _ := (Settings{Enabled: true}).Client()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Handshake(ctx, raw, cfg, ln.Addr().String())
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("silent provider: %v after %v", err, time.Since(start))
	}
	// The provider closes on the first bytes (a bad magic).
	(<-conns).Close()
	raw, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	go func() { c := <-conns; c.Close() }()
	_, err = Handshake(context.Background(), raw, cfg, ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "it serves clear text") {
		t.Fatalf("closing provider: %v", err)
	}
}

// A connection the provider closes during its handshake (refused at its
// connection limit: closed at once after accept while a reader had begun
// the handshake) is not reported as a failed handshake: a line per refused
// connection would flood the log.
func TestCloseDuringHandshakeIsNotReported(t *testing.T) {
	ca := tlsconftest.NewCA(t, "ca")
	pCert, pKey := ca.Issue(t, "provider")
	cfg, err := (Settings{Enabled: true, Cert: pCert, Key: pKey}).Server()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var reports []string
	var mu sync.Mutex
	ln := Listener(raw, cfg, 2*time.Second, nil, func(remote string, err error) {
		mu.Lock()
		reports = append(reports, err.Error())
		mu.Unlock()
	})
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String()) // sends no ClientHello
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { _, err := sc.Read(make([]byte, 1)); read <- err }() // begins the handshake
	time.Sleep(20 * time.Millisecond)
	sc.Close()
	if err := <-read; err == nil {
		t.Fatal("read on a connection closed during its handshake succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 0 {
		t.Errorf("reported %q; want nothing for a connection this side closed", reports)
	}
}

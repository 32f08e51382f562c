package cli

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve --metrics on the port a service listens on is refused before
// either listens, naming both (tester65 #10: the export's "address
// already in use" blamed the RPC listener, and no other process held the
// port); another port, or 0, is taken.
func TestT65_MetricsOnTheListenPortIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	for _, m := range []string{addr, ":" + port, "0.0.0.0:" + port} {
		code, _, errOut := runCLI(t, []string{"serve", "--config", "", "--registry", "memory://", "--listen", addr, "--metrics", m})
		want := "airnode: serve: --metrics " + m + " and the service listen address " + addr + " share port " + port + ": give --metrics another port"
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("--metrics %s: exit %d, stderr %q; want exit 2 and %q", m, code, errOut, want)
		}
	}
	for _, tc := range [][2]string{{"127.0.0.1:9090", "127.0.0.1:20880"}, {"127.0.0.1:0", "127.0.0.1:0"}, {"127.0.0.2:20880", "127.0.0.1:20880"}} {
		if err := samePort(tc[0], tc[1]); err != nil {
			t.Errorf("samePort(%s, %s): %v; want nil", tc[0], tc[1], err)
		}
	}
}

// serve warns of a configuration file every user can read that holds a
// token or a registry password (tester68 F8), and not of one without a
// secret, one only its owner can read, or a commented-out or empty token.
func TestT68_ReadableSecretsWarn(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		mode os.FileMode
		warn bool
	}{
		{"protocol:\n  token: s3cret\n", 0o644, true},
		{"services:\n  - {interface: demo.Echo, params: {Echo.token: x}}\n", 0o644, true},
		{"registry: zookeeper://ops:pw@127.0.0.1:2181\n", 0o644, true},
		{"protocol:\n  token: s3cret\n", 0o640, false},
		{"protocol:\n  timeout: 1s\n# token: later\n", 0o644, false},
		{"registry: zookeeper://127.0.0.1:2181\n", 0o644, false},
	} {
		f := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(f, []byte(tc.text), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, tc.mode); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		warnReadableSecrets(slog.New(slog.NewTextHandler(&buf, nil)), f)
		if got := strings.Contains(buf.String(), "every user of this machine can read it"); got != tc.warn {
			t.Errorf("%q mode %v: warned %v, want %v: %s", tc.text, tc.mode, got, tc.warn, buf.String())
		}
	}
}

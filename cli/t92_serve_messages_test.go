package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestT92_TLSHalfPairNamesTheFlags (tester92 #4): serve --tls-cert
// without --tls-key exited 1 with `tls.cert="srv.pem" and tls.key="":
// give both or neither`. Both halves are the command line's, so it is a
// usage error (exit 2) naming the flags as typed, before anything
// listens; -p's form names -p.
func TestT92_TLSHalfPairNamesTheFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "srv.pem"}, "airnode: serve: --tls-cert srv.pem without --tls-key: serving TLS takes a certificate chain and its private key: give --tls-key FILE (its PEM private key) too, or neither"},
		{[]string{"--tls-key", "srv.key"}, "airnode: serve: --tls-key srv.key without --tls-cert: serving TLS takes a certificate chain and its private key: give --tls-cert FILE (the PEM certificate chain of that key) too, or neither"},
		{[]string{"-p", "tls=true", "-p", "tls.cert=srv.pem"}, "airnode: serve: -p tls.cert=srv.pem without -p tls.key: serving TLS takes a certificate chain and its private key: give -p tls.key=FILE (its PEM private key) too, or neither"},
	} {
		expectServeRefusedCode(t, exitUsage, tc.args, tc.want)
	}
}

// TestT92_ShutdownWaitSaysWhereItsBoundCame (tester92 #4): --shutdown-wait
// above the timeout said "(10s)" where -p's form names the timeout's
// source; and a default wait cut to half of a shorter --shutdown-timeout
// was logged wait_from="the default" beside wait=1.5s.
func TestT92_ShutdownWaitSaysWhereItsBoundCame(t *testing.T) {
	expectServeRefusedCode(t, exitUsage, []string{"--shutdown-wait", "15s"},
		"airnode: serve: config: flag --shutdown-wait: 15s must be between 0 and shutdown.timeout (10s, the default)")
	expectServeRefusedCode(t, exitUsage, []string{"--shutdown-wait", "5s", "--shutdown-timeout", "3s"},
		"must be between 0 and shutdown.timeout (3s, --shutdown-timeout)")

	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-timeout", "3s")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, p.logText())
	}
	if want := `shutting down" wait=1.5s timeout=3s wait_from="half the shutdown timeout (the default 2s cut to leave half for the drain)" timeout_from=--shutdown-timeout`; !strings.Contains(p.logText(), want) {
		t.Errorf("want %s in serve's log:\n%s", want, p.logText())
	}
}

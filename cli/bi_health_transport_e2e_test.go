package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// tester86 #2: `airnode health ADDR` against a healthy provider serving
// --transport tcp failed with CHANNEL_INACTIVE "likely a transport
// mismatch (this consumer's transport=smux ...)". Without -p transport=,
// the probe now retries once over the other bundled transport when the
// provider closes its connection at the first ping, says so on stderr,
// and exits as the answer says; with -p transport= it never guesses.
// The probe stays fast: both tries within --timeout.
func TestBI_HealthRetriesOverTheOtherTransport(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--transport", "tcp")

	for _, args := range [][]string{{p.addr}, {p.addr, "demo.Echo"}} {
		r := health(t, append([]string{"--timeout", "1s"}, args...)...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" {
			t.Fatalf("health %v: exit %d, stdout %q, stderr %q; want 0 and SERVING over transport=tcp", args, r.code, r.stdout, r.stderr)
		}
		// the line ends with the flag: no "transport=tcp" attribute after it (fix-cm)
		if r.stderr != "airnode: health: warning: "+p.addr+" closed a transport=smux connection (the default) at its first ping and answered over transport=tcp: give -p transport=tcp to skip the first try\n" {
			t.Errorf("health %v: stderr %q; want one warning line saying it answered over transport=tcp", args, r.stderr)
		}
		if r.elapsed > 3*time.Second {
			t.Errorf("health %v took %v; want both tries within --timeout 1s and the process's start", args, r.elapsed)
		}
	}

	// the transport named: no guess, the mismatch reported as before
	r := health(t, "--timeout", "1s", p.addr, "-p", "transport=smux")
	expectFail(t, r, "CHANNEL_INACTIVE", "likely a transport mismatch (this consumer's transport=smux")
	if strings.Contains(r.stderr, "retried") || strings.Contains(r.stderr, "answered over") {
		t.Errorf("health -p transport=smux: stderr %q; want no retry over another transport", r.stderr)
	}
	if r := health(t, p.addr, "-p", "transport=tcp"); r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" || r.stderr != "" {
		t.Errorf("health -p transport=tcp: exit %d, stdout %q, stderr %q; want 0, SERVING and nothing on stderr", r.code, r.stdout, r.stderr)
	}

	// a smux provider: answered at the first try, nothing said
	s := serve(t, "127.0.0.1:0", t.TempDir())
	if r := health(t, s.addr); r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" || r.stderr != "" {
		t.Errorf("health of a smux provider: exit %d, stdout %q, stderr %q; want 0, SERVING and nothing on stderr", r.code, r.stdout, r.stderr)
	}
}

// A provider that closes both transports' connections at the first ping
// (TLS on the provider, the probe in clear text) fails the probe in one
// short line saying both tries failed and what to try (fix-co), exit 1.
func TestBI_HealthRetryFailsToo(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	pCert, pKey := ca.Issue(t, "provider")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--tls-cert", pCert, "--tls-key", pKey)
	r := health(t, "--timeout", "1s", p.addr)
	expectFail(t, r, "CHANNEL_INACTIVE: "+p.addr+" closed the connection at its first ping over both transports, transport=tcp (the retry) and transport=smux (the default): likely TLS on the provider (try -p tls=true -p tls.ca=FILE)")
	if r.elapsed > 3*time.Second {
		t.Errorf("health took %v; want both tries within --timeout 1s and the process's start", r.elapsed)
	}
}

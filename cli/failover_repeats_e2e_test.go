package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
)

// Failover does not retry a provider whose failure repeats at once: a
// call to a port nobody listens on makes one attempt and says so, naming
// the address once ("failed after 1 attempt on [ADDR]", was 3 attempts on
// [ADDR, ADDR, ADDR]); the same for a TLS provider whose certificate the
// consumer cannot verify (x509: certificate signed by unknown authority).
func TestFailoverE2E_ErrorThatRepeatsIsOneAttempt(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nobody listens there now

	r := call(t, noAirnodeEnv, "airnode://"+addr+"/demo.Echo", "Echo", `"x"`)
	t.Logf("call to %s, nobody listening: exit %d after %v: %s", addr, r.code, rounded(r.elapsed), r.stderr)
	want := "CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [" + addr + "]: "
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "connection refused") || strings.Contains(r.stderr, addr+", ") {
		t.Errorf("call to a port nobody listens on: exit %d, stderr %q; want it to start %q and say connection refused", r.code, r.stderr, want)
	}

	ca := tlsconftest.NewCA(t, "airnode e2e CA")
	cert, key := ca.Issue(t, "provider")
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--tls-cert", cert, "--tls-key", key, "--transport", "tcp")
	r = call(t, noAirnodeEnv, "airnode://"+p.addr+"/demo.Echo?transport=tcp&tls=true", "Echo", `"x"`)
	t.Logf("call to a TLS provider without its CA: exit %d after %v: %s", r.code, rounded(r.elapsed), r.stderr)
	want = "CHANNEL_INACTIVE: failover: demo.Echo.Echo failed after 1 attempt on [" + p.addr + "]: "
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "certificate signed by unknown authority") {
		t.Errorf("call to a TLS provider without its CA: exit %d, stderr %q; want it to start %q and name the unknown authority", r.code, r.stderr, want)
	}
}

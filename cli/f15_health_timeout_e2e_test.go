package cli

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
)

// Tester60 #2: `airnode health --timeout D` is a Kubernetes exec probe, so
// D bounds the whole probe, connecting included: against a node that
// accepts and never answers it exits 1 within D (not connect.timeout's
// 3s), saying nothing answered; with connect.timeout set longer by -p, the
// probe still ends at D, saying it did not answer within --timeout.
func TestHealthTimeoutBoundsTheConnect(t *testing.T) {
	addr := testproxy.Hung(t)
	const bound = time.Second // generous: the probe measures --timeout + ~35ms here

	r := health(t, "--timeout", "500ms", addr)
	expectFail(t, r, "CHANNEL_INACTIVE: ", "nothing answered the first ping within 500ms (connect.timeout)")
	if r.elapsed > 500*time.Millisecond+bound {
		t.Errorf("health --timeout 500ms took %v against a node that never answers", r.elapsed)
	}
	t.Logf("--timeout 500ms: %v", r.elapsed)

	r = health(t, "--timeout", "500ms", "-p", "connect.timeout=5s", addr)
	expectFail(t, r, "CLIENT_TIMEOUT: ", "health: "+addr+" did not answer within --timeout 500ms, connecting included (connect.timeout 5s)")
	if r.elapsed > 500*time.Millisecond+bound {
		t.Errorf("health --timeout 500ms -p connect.timeout=5s took %v against a node that never answers", r.elapsed)
	}
	t.Logf("--timeout 500ms -p connect.timeout=5s: %v", r.elapsed)

	// the default timeout (1s) bounds it too
	r = health(t, addr)
	expectFail(t, r, "CHANNEL_INACTIVE: ", "nothing answered the first ping within 1s (connect.timeout)")
	if r.elapsed > time.Second+bound {
		t.Errorf("health with the default timeout (1s) took %v against a node that never answers", r.elapsed)
	}
}

// Tester60 #2's wish: `airnode health` given an HTTP address (serve
// --metrics's) by mistake says that the address answers HTTP and which
// address to give, within --timeout.
func TestHealthOnAnHTTPPortSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	r := health(t, "--timeout", "500ms", addr)
	expectFail(t, r, "CHANNEL_INACTIVE: ", addr+" answers HTTP (200 OK): it is an HTTP port, such as serve --metrics's; give the provider's RPC address (serve --listen)")
	if r.elapsed > 1500*time.Millisecond {
		t.Errorf("health --timeout 500ms took %v against an HTTP server", r.elapsed)
	}
}

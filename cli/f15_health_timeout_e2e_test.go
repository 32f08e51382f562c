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
	// elapsed counts starting the (race-built) binary, which --timeout
	// cannot bound: on a loaded machine it took over a second. So each
	// probe's time is measured over the start of the same command that
	// ends at once (a usage error), the longer of one run before and one
	// after it.
	startup := func() time.Duration {
		t.Helper()
		r := health(t, addr+"/demo.Echo")
		if r.code != exitUsage {
			t.Fatalf("health ADDR/demo.Echo: exit %d, stderr %q; want a usage error", r.code, r.stderr)
		}
		return r.elapsed
	}
	probe := func(args ...string) (r result, took time.Duration) {
		t.Helper()
		before := startup()
		r = health(t, args...)
		return r, r.elapsed - max(before, startup())
	}

	r, took := probe("--timeout", "500ms", addr)
	expectFail(t, r, "CHANNEL_INACTIVE: ", "nothing answered the first ping within 500ms (connect.timeout)")
	if took > 500*time.Millisecond+bound {
		t.Errorf("health --timeout 500ms took %v (%v with the binary's start) against a node that never answers", took, r.elapsed)
	}
	t.Logf("--timeout 500ms: %v (%v with the binary's start)", took, r.elapsed)

	r, took = probe("--timeout", "500ms", "-p", "connect.timeout=5s", addr)
	expectFail(t, r, "CLIENT_TIMEOUT: ", "health: "+addr+" did not answer within --timeout 500ms, connecting included (connect.timeout 5s)")
	if took > 500*time.Millisecond+bound {
		t.Errorf("health --timeout 500ms -p connect.timeout=5s took %v (%v with the binary's start) against a node that never answers", took, r.elapsed)
	}
	t.Logf("--timeout 500ms -p connect.timeout=5s: %v (%v with the binary's start)", took, r.elapsed)

	// the default timeout (1s) bounds it too
	r, took = probe(addr)
	expectFail(t, r, "CHANNEL_INACTIVE: ", "nothing answered the first ping within 1s (connect.timeout)")
	if took > time.Second+bound {
		t.Errorf("health with the default timeout (1s) took %v (%v with the binary's start) against a node that never answers", took, r.elapsed)
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

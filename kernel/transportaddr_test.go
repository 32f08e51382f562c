package kernel

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// Two services on one fixed address with different transports: the second
// export is refused naming the first's transport and service, before it
// tries to listen (was "bind: address already in use"). Port 0 gives each
// its own port.
func TestExportRefusesASecondTransportOnOneAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if _, err := n.Export(ctxT(t), demo.New("a", 100), spi.MustParse("airnode://"+addr+"/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	_, err = n.Export(ctxT(t), demo.New("b", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?group=b&transport=tcp"))
	if err == nil || !strings.Contains(err.Error(), addr+" already serves transport smux (demo.Echo, exported first): one transport per address") {
		t.Fatalf("second transport on %s: %v", addr, err)
	}
	if _, err := n.Export(ctxT(t), demo.New("c", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=c&transport=tcp")); err != nil {
		t.Fatalf("tcp on port 0 next to smux: %v", err)
	}
}

// TLS is per listener: a second service on the first's address without
// tls=true would be served over the first's TLS while publishing clear
// text; Export refuses it, naming the key (as serve's pre-check does).
func TestExportRefusesAnotherTLSOnOneAddress(t *testing.T) {
	cert, key := tlsconftest.NewCA(t, "test CA").Issue(t, "127.0.0.1")
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("a", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?tls=true&tls.cert="+cert+"&tls.key="+key))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	_, err = n.Export(ctxT(t), demo.New("b", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?group=b"))
	if err == nil || !strings.Contains(err.Error(), `URL key "tls" is "false"`) || !strings.Contains(err.Error(), "per listening address") {
		t.Fatalf("a clear-text service on the TLS listener %s: %v", addr, err)
	}
}

// A direct call naming no group or version, to an address that exports the
// interface only in a group and version, is told which ones are there
// (tester7: a bare SERVICE_NOT_FOUND).
func TestDirectCallToAnotherGroupNamesWhatIsExported(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("g", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=g&version=1.0"))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?retries=0")
	_, err = r.Invoke(ctxT(t), "Echo", 1)
	if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "exported here in another group or version: g/demo.Echo:1.0") {
		t.Fatalf("call without group and version: %v", err)
	}
}

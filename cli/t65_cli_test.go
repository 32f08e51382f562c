package cli

import (
	"net"
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

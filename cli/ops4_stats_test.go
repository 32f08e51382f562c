package cli

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// tester33 F4: `airnode stats ADDR` on a node that accepts connections
// but never answers (a SIGSTOPped process: its kernel completes the
// handshake into the listen backlog; here a listener that never calls
// Accept) says the node is hung or overloaded, not that the address is
// wrong; a closed port and an RPC port still get the "give the address of
// serve --metrics" hint.
func TestOps4StatsHungNodeHint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hung := ln.Addr().String()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"stats", "--timeout", "1s", hung}, &out, &errb)
	took := time.Since(start)
	if code != 1 || !strings.Contains(errb.String(), "the node at "+hung+" accepted the connection but did not answer in 1s: hung (SIGSTOP, swap, GC) or overloaded") ||
		strings.Contains(errb.String(), "RPC port") {
		t.Errorf("hung node: exit %d, stderr %q", code, errb.String())
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("hung node: gave up after %v, want about the 1s timeout", took)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	closed.Close()
	errb.Reset()
	if code := run(context.Background(), []string{"stats", "--timeout", "1s", gone}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "(give the address of serve --metrics, not the RPC port)") {
		t.Errorf("closed port: exit %d, stderr %q", code, errb.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.DiscardHandler)), kernel.WithShutdownWait(0))
	defer pn.Close()
	e, err := pn.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run(ctx, []string{"stats", "--timeout", "3s", e.URL().Address()}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "(give the address of serve --metrics, not the RPC port)") {
		t.Errorf("RPC port: exit %d, stderr %q", code, errb.String())
	}
}

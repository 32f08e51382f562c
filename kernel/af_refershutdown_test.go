package kernel

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// nu78 finding 2: shutdown.timeout (and shutdown.wait) on a reference's
// URL has no effect: the node's shutdown timeout bounds its Close for the
// calls in flight of every reference. Refer says so once per key, naming
// what sets it, where it said nothing; the node's bound holds.
func TestNu78_ReferWarnsShutdownKeysAreTheNodes(t *testing.T) {
	_, e := provider(t)
	addr := e.URL().Address()

	var logs syncBuffer
	const bound = 300 * time.Millisecond
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownTimeout(bound))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+addr+"/demo.Echo?timeout=10s&shutdown.timeout=5s&shutdown.wait=1s")
	out := logs.String()
	for _, want := range []string{
		`msg="shutdown.timeout has no effect on a reference: it is the node's (kernel.WithShutdownTimeout, serve --shutdown-timeout; an export's URL key), which bounds the node's Close for the calls in flight of all its references" component=kernel service=demo.Echo key=shutdown.timeout value=5s`,
		`msg="shutdown.wait has no effect on a reference: it is the node's (kernel.WithShutdownWait, serve --shutdown-wait; an export's URL key), its pause between unregistering its exports and closing their listeners" component=kernel service=demo.Echo key=shutdown.wait value=1s`,
	} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("log has %d of\n%s\nwant 1; logs:\n%s", n, want, out)
		}
	}
	ws, err := c.ReferWarnings(spi.MustParse("airnode://" + addr + "/demo.Echo?shutdown.timeout=5s"))
	if err != nil || len(ws) != 1 || ws[0].Kind != "node" || ws[0].Key != "shutdown.timeout" || ws[0].Value != "5s" {
		t.Errorf("ReferWarnings = %+v, %v; want one of kind node for shutdown.timeout=5s", ws, err)
	}

	// The node's bound, not the reference's 5s, cuts the call in flight.
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(context.Background(), "Sleep", 5000)
		errc <- err
	}()
	eventually(t, "the call in flight", func() bool { return r.Providers()[0].Stats().Active() == 1 })
	start := time.Now()
	_ = c.Shutdown(ctxT(t))
	if took := time.Since(start); took > bound+3*time.Second {
		t.Errorf("consumer Shutdown took %v, its node's bound is %v", took, bound)
	}
	if err := <-errc; spi.StatusOf(err) != spi.StatusChannelInactive || !strings.Contains(err.Error(), "within its shutdown timeout 300ms") {
		t.Errorf("call in flight at Shutdown = %v, want CHANNEL_INACTIVE naming the node's 300ms", err)
	}
}

package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// TestDN_LargeRequestOverSlowLinkKeepsConnection (fix-dn): a consumer
// writing a 24 MiB request through a link of 1.5 MiB/s (a throttled
// proxy: 16 s) with the default liveness check on and a 28 s timeout
// (the quiet watch pings after exchange.QuietBound, 14 s at most, with
// nothing read) keeps its connection and the call succeeds, on tcp and
// smux: this side's own sending (its writer's progress, and the link's
// acknowledgements of the bytes queued in the socket) explains the
// provider's silence. 19-23 s under -race at load 16.
func TestDN_LargeRequestOverSlowLinkKeepsConnection(t *testing.T) {
	t.Parallel()
	const (
		size    = 24 << 20
		rate    = 3 << 19 // 1.5 MiB/s: 16 s for the request
		timeout = 28 * time.Second
	)
	for _, transport := range []string{"tcp", "smux"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = p.Close() })
			e, err := p.Export(ctxT(t), lenService{}, spi.MustParse("airnode://127.0.0.1:0/dn.Len?payload=64MiB&transport="+transport))
			if err != nil {
				t.Fatal(err)
			}
			px := testproxy.New(t, e.URL().Address())
			px.SetRate(rate, 0)
			r := refer(t, consumer(t), "airnode://"+px.Addr()+"/dn.Len?payload=64MiB&timeout="+timeout.String()+"&transport="+transport)
			if _, err := r.Invoke(ctxT(t), "Size", []byte("hi")); err != nil {
				t.Fatal(err)
			}
			conn := r.Providers()[0].(*remoteInvoker).conns[0]
			before, err := conn.get()
			if err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			got, err := r.Invoke(ctx, "Size", make([]byte, size))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("24 MiB request over 1.5 MiB/s after %v: %v", took.Round(time.Millisecond), err)
			}
			if n, ok := got.(int64); !ok || n != size {
				t.Fatalf("24 MiB request: answered %v (%T), want its length %d", got, got, size)
			}
			if took < exchange.QuietBound(timeout)+time.Second {
				t.Fatalf("the request took %v, less than the quiet bound and the ping's wait (%v): the test proves nothing", took, exchange.QuietBound(timeout)+time.Second)
			}
			if now, err := conn.get(); err != nil || now != before {
				t.Errorf("the connection after the request: %p (err %v), want the same as before (%p)", now, err, before)
			}
			t.Logf("24 MiB over 1.5 MiB/s in %v, same connection", took.Round(time.Millisecond))
		})
	}
}

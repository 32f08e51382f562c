package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester72 #8: a consumer refused at the provider's connection limit got
// a ~700-character guess (a transport mismatch, TLS on the provider, or
// the connection limit). The provider now says why in the close-reason
// event before it closes (docs/wire.md), and the consumer names the cause
// outright, on both transports (smux multiplexed, tcp not), and for the
// per-IP limit too.
func TestT72_RefusedConsumerNamesTheConnectionLimit(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"accepts=1&transport=smux", "the provider refused the connection: it already serves 1 connection, its limit (accepts=1)"},
		{"accepts=1&transport=tcp", "the provider refused the connection: it already serves 1 connection, its limit (accepts=1)"},
		{"accepts.per.ip=1", "the provider refused the connection: it already serves 1 connection from 127.0.0.1, its limit per peer IP (accepts.per.ip=1)"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, e, srv := exportLimited(t, tc.query, nil)
			u := spi.MustParse("airnode://" + e.URL().Address() + "/demo.Echo?timeout=5s")
			if tr, ok := e.URL().Param("transport"); ok {
				u = u.With("transport", tr)
			}
			holder := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = holder.Close() })
			held, err := holder.Refer(ctxT(t), u, spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := held.Invoke(ctxT(t), "Echo", "x"); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
				r, err := n.Refer(ctxT(t), u, spi.URL{})
				if err == nil {
					_, err = r.Invoke(ctxT(t), "Echo", "x")
				}
				_ = n.Close()
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "mismatch") {
					t.Fatalf("refused call %d: %v\nwant it to say %q, and no guess", i, err, tc.want)
				}
				if i == 0 {
					t.Logf("%d characters: %v", len(err.Error()), err)
				}
			}
			if srv.Refused() < 3 {
				t.Errorf("the provider counted %d refusals, want at least 3", srv.Refused())
			}
		})
	}
}

package kernel

import (
	"testing"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// fix-m leftover (tester72): a connection a real provider at accepts=1
// refuses (it sends its close-reason event, then closes) is counted in
// airnode_consumer_connect_failures_total{reason="provider_limit"}, not
// among reason="other" with TCP refusals and timeouts. On both
// transports.
func TestQ3_ProviderLimitIsItsOwnConnectFailureReason(t *testing.T) {
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			_, e, srv := exportLimited(t, "accepts=1&transport="+tr, nil)
			u := spi.MustParse("airnode://" + e.URL().Address() + "/demo.Echo?timeout=5s&transport=" + tr)
			holder := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = holder.Close() })
			held, err := holder.Refer(ctxT(t), u, spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := held.Invoke(ctxT(t), "Echo", "x"); err != nil {
				t.Fatal(err)
			}
			limit0, other0 := counters.Transport.ConnectProviderLimit.Load(), counters.Transport.ConnectOther.Load()
			refused0 := srv.Refused()
			for range 3 {
				n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
				r, err := n.Refer(ctxT(t), u, spi.URL{})
				if err == nil {
					_, err = r.Invoke(ctxT(t), "Echo", "x")
				}
				_ = n.Close()
				if err == nil {
					t.Fatal("a call beyond accepts=1 succeeded")
				}
			}
			limit, other := counters.Transport.ConnectProviderLimit.Load()-limit0, counters.Transport.ConnectOther.Load()-other0
			if refused := srv.Refused() - refused0; limit < 3 || limit > refused {
				t.Errorf("provider_limit counted %d attempts (other %d); the provider refused %d: want at least 3, at most the refusals", limit, other, refused)
			}
			t.Logf("provider_limit +%d, other +%d, refused by the provider +%d", limit, other, srv.Refused()-refused0)
		})
	}
}

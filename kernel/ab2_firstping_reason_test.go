package kernel

import (
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// fix-ab #2: a connection whose first ping (a heartbeat, with the hello)
// never gets an answer — a real TCP listener that accepts and never
// reads, a hung provider — is counted in
// airnode_consumer_connect_failures_total{reason="heartbeat"}, as a later
// unanswered ping is a heartbeat verdict, not among reason="other" (resets,
// TLS failures, an error answer). Every failed attempt, the first and the
// redials, counts there. On both transports.
func TestAB2_UnansweredFirstPingIsAHeartbeatConnectFailure(t *testing.T) {
	for _, tr := range []string{"smux", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			addr := testproxy.Hung(t)
			hb0, other0 := counters.Transport.ConnectHeartbeat.Load(), counters.Transport.ConnectOther.Load()
			n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
			t.Cleanup(func() { _ = n.Close() })
			r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?connect.timeout=300ms&timeout=2s&reconnect.backoff=50ms&transport="+tr), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Invoke(ctxT(t), "Echo", "x"); err == nil {
				t.Fatal("a call to a provider that never answers succeeded")
			}
			deadline := time.Now().Add(10 * time.Second)
			for counters.Transport.ConnectHeartbeat.Load()-hb0 < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			_ = n.Close()
			hb, other := counters.Transport.ConnectHeartbeat.Load()-hb0, counters.Transport.ConnectOther.Load()-other0
			t.Logf("reason heartbeat +%d, other +%d", hb, other)
			if hb < 2 || other != 0 {
				t.Errorf("attempts whose first ping got no answer: reason heartbeat +%d, other +%d; want at least 2 (the first and a redial), and 0", hb, other)
			}
		})
	}
}

package hbparams

import (
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestPeerCloseTimeout: the provider's negotiated close timeout for each
// consumer strategy, and no answer for none or bad values.
func TestPeerCloseTimeout(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want time.Duration // 0: not negotiated
	}{
		{"heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3", 5 * time.Second},
		{"heartbeat.interval=1s", 5 * time.Second}, // idle is the default
		{"heartbeat=1000", 5 * time.Second},        // Dubbo's bare interval
		{"heartbeat=idle&heartbeat.interval=1s&heartbeat.ping.timeout=2s&heartbeat.retries=2", 6 * time.Second},
		{"heartbeat=idle&heartbeat.interval=200ms", 200*time.Millisecond + 600*time.Millisecond + time.Second},
		{"heartbeat=dual&heartbeat.interval=1s", 3 * time.Second},
		{"heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=5s", 5 * time.Second},
		{"heartbeat=none", 0},
		{"heartbeat=other", 0},
		{"heartbeat.interval=soon", 0},
		{"heartbeat.retries=0", 0},
	} {
		d, ok := PeerCloseTimeout(spi.MustParse("airnode://peer/?" + tc.q))
		if ok != (tc.want != 0) || d != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.q, d, ok, tc.want)
		}
	}
}

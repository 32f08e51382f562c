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

// peerChannel is a channel carrying a consumer's heartbeat settings.
type peerChannel struct {
	spi.Channel
	peer spi.URL
}

func (c peerChannel) PeerHeartbeat() (spi.URL, bool) { return c.peer, true }

// A consumer's hello does not keep a silent connection longer than
// PeerTimeoutCap: heartbeat.interval=1h asked for 5 hours (tester49
// finding 8); a bound under the cap is kept as asked.
func TestPeerTimeoutCapped(t *testing.T) {
	for _, tc := range []struct {
		q    string
		own  time.Duration
		want time.Duration
	}{
		{"heartbeat=idle&heartbeat.interval=1h", 6 * time.Second, 5 * time.Minute},     // the floor
		{"heartbeat=idle&heartbeat.interval=1h", 200 * time.Second, 800 * time.Second}, // 4 × own
		{"heartbeat=dual&heartbeat.interval=1h", 200 * time.Second, 800 * time.Second}, // dual too
		{"heartbeat=idle&heartbeat.interval=1m", 200 * time.Second, 5 * time.Minute},   // the defaults: as asked
		{"heartbeat=idle&heartbeat.interval=1s", 6 * time.Second, 5 * time.Second},     // under the cap: as asked
		{"heartbeat=dual&heartbeat.timeout=20s&heartbeat.interval=5s", 6 * time.Second, 20 * time.Second},
	} {
		d, ok := PeerTimeout(peerChannel{peer: spi.MustParse("airnode://peer/?" + tc.q)}, tc.own)
		if !ok || d != tc.want {
			t.Errorf("%s, own %v: %v %v, want %v", tc.q, tc.own, d, ok, tc.want)
		}
	}
}

package integration

import (
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// An idle consumer channel with heartbeat.interval=100ms pings its
// provider; the pings are counted as sent and answered.
func TestCounters_HeartbeatPings(t *testing.T) {
	_, addr := provider(t, "heartbeat.min.ping.interval=0") // 100 ms pings would trip the ping-flood guard
	r := refer(t, newNode(t), addr, "heartbeat=idle&heartbeat.interval=100ms")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	sent, answered, received := counters.Heartbeat.PingsSent.Load(), counters.Heartbeat.PingsAnswered.Load(), counters.Heartbeat.PingsReceived.Load()
	deadline := time.Now().Add(5 * time.Second)
	for counters.Heartbeat.PingsAnswered.Load()-answered < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("pings sent %d, answered %d in 5 s of idleness",
				counters.Heartbeat.PingsSent.Load()-sent, counters.Heartbeat.PingsAnswered.Load()-answered)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if counters.Heartbeat.PingsSent.Load()-sent < 2 {
		t.Error("answered pings were not counted as sent")
	}
	if counters.Heartbeat.PingsReceived.Load()-received < 2 { // the provider is in this process too
		t.Error("the provider did not count the pings it answered")
	}
}

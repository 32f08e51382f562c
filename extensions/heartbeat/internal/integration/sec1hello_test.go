package integration

import (
	"strings"
	"testing"
	"time"
)

// A consumer whose hello the provider cannot use (an unknown strategy)
// and that then stops pinging is closed on the provider's own
// heartbeat.timeout, and the reason says the hello was unusable, not
// "the consumer sent no hello" (tester49 finding 8).
func TestNegotiation_UnusableHelloNamed(t *testing.T) {
	t.Parallel()
	const pq = "heartbeat=idle&heartbeat.interval=500ms&heartbeat.timeout=2s"
	p := startProvider(t, heartbeat(t, pq), hello(pq, nil))
	c := dial(t, p.addr, heartbeat(t, "heartbeat=none"), hello("heartbeat=other&heartbeat.interval=1h", nil))
	handshake(t, c)
	start := time.Now()
	r, ok := waitReason(p.closed, 10*time.Second)
	if !ok {
		t.Fatal("the provider kept a silent connection 10 s with heartbeat.timeout 2s")
	}
	t.Logf("closed after %v: %s", time.Since(start).Round(time.Millisecond), r)
	if !strings.Contains(r, "heartbeat.timeout 2s") || !strings.Contains(r, "the consumer's heartbeat hello") || strings.Contains(r, "sent no hello") {
		t.Errorf("reason %q: want the provider's heartbeat.timeout 2s and the unusable hello named", r)
	}
}

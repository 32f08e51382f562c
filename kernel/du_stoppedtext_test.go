package kernel

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// TestDU_RedialToAStoppedProviderSaysStoppedOrHung (tester102 #3): a
// provider that answered before and is now stopped (the proxy forwards
// nothing: kill -STOP) is redialed after its connection closes; the
// unanswered first ping's WARN leads with "stopped or hung (it answered
// before", not with a likely configuration mismatch, and is written at
// attempts 1, 2, 4, ... only.
func TestDU_RedialToAStoppedProviderSaysStoppedOrHung(t *testing.T) {
	_, addr := namedProvider(t, "p")
	px := testproxy.New(t, addr)
	c, logs, _ := pickingConsumer(t)
	r := refer(t, c, "airnode://"+px.Addr()+"/t12.Who?connect.timeout=300ms&reconnect.backoff=50ms")
	eventually(t, "connected", func() bool { return len(r.dir.List(&spi.Invocation{Method: "Who"})) == 1 })
	px.Pause(true)
	px.Cut()
	var lines []logRecord
	if !waitFor(10*time.Second, func() bool {
		lines = logs.find("kernel: cannot reconnect to provider")
		return len(lines) >= 2
	}) {
		t.Fatalf("no two reconnect failures within 10 s: %v", lines)
	}
	time.Sleep(time.Second) // attempts 3 (not logged at Warn) and 4 come
	for _, l := range logs.find("kernel: cannot reconnect to provider") {
		if l.level.String() != "WARN" {
			continue // attempts 3, 5, 6, 7 are at Debug
		}
		err := l.attrs["err"]
		if !strings.HasPrefix(err, "connected, but the provider is stopped or hung (it answered before") || strings.Contains(err, "same transport and tls keys") {
			t.Errorf("reconnect line %q, want it to lead with stopped or hung, without the mismatch question", err)
		}
		if a := l.attrs["attempt"]; a != "1" && a != "2" && a != "4" && a != "8" {
			t.Errorf("reconnect line at attempt %s: want only 1, 2, 4, 8 at Warn", a)
		}
	}
	t.Logf("%d lines, the first: %s", len(lines), lines[0].attrs["err"])
}

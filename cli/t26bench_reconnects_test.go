package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestBenchReportsReconnects (tester26 finding 8): bench's report says
// how often the run's connections died and were redialled, so that a
// failover seen in the timeline can be told from a provider that was
// merely slow. A provider killed a second into a 3 s run: --json's
// reconnects counts the redials (reconnect.backoff 50ms: several), none
// before the kill; the text summary says it too.
func TestBenchReportsReconnects(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	url := p.url("demo.Echo") + "?reconnect.backoff=50ms"

	quiet := benchRun(t, nil, url, "-n", "2000", "-c", "4", "--json")
	var q struct {
		Reconnects      *uint64 `json:"reconnects"`
		HeartbeatCloses *uint64 `json:"heartbeat_closes"`
	}
	if err := json.Unmarshal([]byte(quiet), &q); err != nil {
		t.Fatal(err)
	}
	if q.Reconnects == nil || q.HeartbeatCloses == nil || *q.Reconnects != 0 || *q.HeartbeatCloses != 0 {
		t.Fatalf("a run with nothing dying: reconnects %v, heartbeat_closes %v; want both present and 0:\n%s", q.Reconnects, q.HeartbeatCloses, quiet)
	}

	kill := time.AfterFunc(time.Second, func() { _ = p.cmd.Process.Kill() }) // not kill9: no t.Fatal off the test goroutine
	defer kill.Stop()
	out := benchRun(t, nil, url, "--duration", "3s", "-c", "4", "--timeout", "500ms", "--json")
	var r struct {
		Reconnects uint64           `json:"reconnects"`
		Errors     map[string]int64 `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("reconnects %d, errors %v", r.Reconnects, r.Errors)
	if r.Reconnects < 2 {
		t.Errorf("reconnects %d after the provider was killed a second into the run (backoff 50ms), want several", r.Reconnects)
	}
	var o benchOutcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	printOutcome(&text, "demo.Echo", benchOutcome{Report: o.Report, Case: &benchCase{Req: 100, Resp: 100, Concurrency: 4}, Reconnects: r.Reconnects}, benchFlags{connections: 1})
	if !strings.Contains(text.String(), "redial(s) after a connection died") {
		t.Errorf("summary does not mention the redials:\n%s", text.String())
	}
}

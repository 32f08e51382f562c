package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBenchReportsReconnects (tester26 finding 8): bench's report says
// how often the run's connections died and were redialled, so that a
// failover seen in the timeline can be told from a provider that was
// merely slow. A provider killed a second into a 3 s run: --json's
// connections_lost is 1, reconnect_attempts counts the redials
// (reconnect.backoff 50ms: several), reconnects (connections re-made) is
// 0: none came up again (tester76 #2: it counted the redials); none
// before the kill; the text summary says it too. The kill waits for the
// provider to have served the run's warm-up and some measured calls (its
// /metrics): a kill a wall-clock second after bench started came before
// bench's first connection under load (every call then failed "not sent").
func TestBenchReportsReconnects(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	metrics := metricsAddr(t, p)
	url := p.url("demo.Echo") + "?reconnect.backoff=50ms"

	quiet := benchRun(t, nil, url, "-n", "2000", "-c", "4", "--json")
	var q map[string]any
	if err := json.Unmarshal([]byte(quiet), &q); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"reconnects", "reconnect_attempts", "connections_lost", "heartbeat_closes", "liveness_closes", "connections_down_at_end"} {
		if q[k] != float64(0) {
			t.Errorf("a run with nothing dying: %s %v; want present and 0:\n%s", k, q[k], quiet)
		}
	}

	served := echoCallsServed(t, metrics)
	cmd, stdout, stderr := benchStart(t, url, "--duration", "3s", "-c", "4", "--timeout", "500ms", "--json")
	// --duration's warm-up: at most 2000 calls (bench --help), then measured ones
	for deadline := time.Now().Add(20 * time.Second); echoCallsServed(t, metrics) < served+2500; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the provider served %d calls of the bench's in 20 s, want 2500:\n%s", echoCallsServed(t, metrics)-served, stderr.String())
		}
	}
	_ = p.cmd.Process.Kill() // not kill9: it waits for the exit
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bench: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	var r struct {
		Reconnects        uint64           `json:"reconnects"`
		ReconnectAttempts uint64           `json:"reconnect_attempts"`
		ConnectionsLost   uint64           `json:"connections_lost"`
		Errors            map[string]int64 `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("connections lost %d, reconnects %d, reconnect attempts %d, errors %v", r.ConnectionsLost, r.Reconnects, r.ReconnectAttempts, r.Errors)
	if r.ReconnectAttempts < 2 || r.Reconnects != 0 || r.ConnectionsLost != 1 {
		t.Errorf("after the provider was killed a second into the run (backoff 50ms): connections lost %d, reconnects %d, reconnect attempts %d; want 1, 0 (it never came back), several",
			r.ConnectionsLost, r.Reconnects, r.ReconnectAttempts)
	}
	var o benchOutcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	printOutcome(&text, "demo.Echo", benchOutcome{Report: o.Report, Case: &benchCase{Req: 100, Resp: 100, Concurrency: 4},
		ConnectionsLost: r.ConnectionsLost, ReconnectAttempts: r.ReconnectAttempts}, benchFlags{connections: 1})
	if want := fmt.Sprintf("connections 1 lost, 0 re-made (%d dial(s))", r.ReconnectAttempts); !strings.Contains(text.String(), want) {
		t.Errorf("summary does not say %q:\n%s", want, text.String())
	}
}

// echoCallsServed is providerEchoCalls, failing the test on an error.
func echoCallsServed(t *testing.T, metrics string) int64 {
	t.Helper()
	n, err := providerEchoCalls(http.DefaultClient, metrics)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

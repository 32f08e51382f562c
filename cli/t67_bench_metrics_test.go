package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// bench --metrics serves the consumer's series while the run lasts
// (tester67 #4: no shipped command showed a consumer's metrics): during
// a 4 s run /metrics has airnode_consumer_provider_calls_total for the
// provider called, and the address is closed when bench exits.
func TestT67_BenchServesConsumerMetrics(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	bm := startMetricsBench(t, p.url("demo.Echo"), "--duration", "4s", "-c", "2")
	maddr := bm.addr
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + maddr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if body = string(b); strings.Contains(body, `airnode_consumer_provider_calls_total{provider="`+p.addr+`",service="demo.Echo"}`) {
			break
		}
	}
	if code := bm.wait(t, time.Minute); code != 0 {
		t.Fatalf("bench: exit %d, output %q", code, bm.out.String())
	}
	if !strings.Contains(body, `airnode_consumer_provider_calls_total{provider="`+p.addr+`",service="demo.Echo"}`) {
		t.Fatalf("/metrics during the run lacks the consumer's calls to %s:\n%.2000s", p.addr, body)
	}
	if _, err := http.Get("http://" + maddr + "/metrics"); err == nil {
		t.Errorf("%s still answers after bench exited", maddr)
	}
}

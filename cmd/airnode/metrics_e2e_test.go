package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 8 acceptance: `curl ADDR/metrics` after 1,000 Echo calls shows
// 1000 in the provider's call counter of demo.Echo/Echo, and the latency
// histogram.
func TestE2E_MetricsAfter1000EchoCalls(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	r := refer(t, p.url("demo.Echo"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 1000 {
		if _, err := r.Invoke(ctx, "Echo", i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`airnode_calls_total{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_count{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_bucket{method="Echo",service="demo.Echo",side="provider",le="0.0001"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

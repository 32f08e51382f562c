package cli

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
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
	body := getMetrics(t, m[1])
	for _, want := range []string{
		`airnode_calls_total{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_count{method="Echo",service="demo.Echo",side="provider"} 1000`,
		`airnode_call_duration_seconds_bucket{method="Echo",service="demo.Echo",side="provider",le="0.0001"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Calls a provider answers before any service's filter chain — an unknown
// service or method (SERVICE_NOT_FOUND), a wrong argument count or an
// undecodable argument (BAD_REQUEST) — are in no per-method row of
// `airnode stats`, which showed zero errors for them: a last line counts
// them by status, and /metrics has them as airnode_provider_rejected_total
// with a status label only (no series per name a client makes up).
func TestE2E_StatsCountsRequestsRejectedBeforeTheService(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	echo := refer(t, p.url("demo.Echo"))
	if _, err := echo.Invoke(ctx, "Echo", "ok"); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		r      *kernel.Reference
		method string
		args   []any
		status spi.Status
	}{
		{echo, "Nope", []any{1}, spi.StatusServiceNotFound},
		{echo, "Random7f3a", nil, spi.StatusServiceNotFound},
		{refer(t, p.url("demo.Missing")), "Echo", []any{1}, spi.StatusServiceNotFound},
		{echo, "Echo", []any{1, 2}, spi.StatusBadRequest},
		{echo, "Fail", []any{123}, spi.StatusBadRequest},
	}
	for _, b := range bad {
		if err := b.r.Call(ctx, b.method, b.args, nil); spi.StatusOf(err) != b.status {
			t.Fatalf("%s%v: %v, want %s", b.method, b.args, err, b.status)
		}
	}
	r := runCommand(t, 20*time.Second, nil, "stats", m[1])
	if r.code != 0 {
		t.Fatalf("stats: exit %d: %s", r.code, r.stderr)
	}
	t.Logf("airnode stats:\n%s", r.stdout)
	if !strings.Contains(r.stdout, "provider requests rejected before the service: SERVICE_NOT_FOUND 3, BAD_REQUEST 2\n") {
		t.Errorf("stats lacks the rejected line:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "Nope") || strings.Contains(r.stdout, "Random7f3a") || strings.Contains(r.stdout, "demo.Missing") {
		t.Errorf("stats has a row for a name the client made up:\n%s", r.stdout)
	}
	body := getMetrics(t, m[1])
	for _, want := range []string{
		`airnode_provider_rejected_total{status="SERVICE_NOT_FOUND"} 3`,
		`airnode_provider_rejected_total{status="BAD_REQUEST"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "Random7f3a") {
		t.Error("/metrics has a series for a method name the client made up")
	}
}

// getMetrics returns the body of GET http://addr/metrics.
func getMetrics(t *testing.T, addr string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(body)
}

package metrics_test

import (
	"os"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// Tester27 finding 12d: /metrics served process_network_receive_bytes_total
// and process_network_transmit_bytes_total, which client_golang reads from
// /proc/self/net/dev: the network namespace's traffic (the whole host's,
// 5.9e10 bytes on a fresh provider), not this process's. /metrics leaves
// them out and keeps the process collector's other series.
func TestT27Ops_MetricsLeaveOutNamespaceNetworkBytes(t *testing.T) {
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	code, body := probe(t, srv, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	if strings.Contains(body, "process_network_") {
		t.Errorf("/metrics has a process_network_ series (the network namespace's bytes, not the process's):\n%s", grepLines(body, "process_network_"))
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		for _, want := range []string{"\nprocess_cpu_seconds_total ", "\nprocess_open_fds ", "\nprocess_resident_memory_bytes "} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q: the process collector's other series must stay", strings.TrimSpace(want))
			}
		}
	}
}

// grepLines returns body's lines that contain s.
func grepLines(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

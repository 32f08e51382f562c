package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/counters"
)

// nu50 finding 3: refused TLS handshakes reach /metrics (one family
// labelled by reason) and /stats under their dotted names.
func TestT50_TLSHandshakeFailuresExported(t *testing.T) {
	counters.TLS.ClientNames.Add(2)
	counters.TLS.HungUp.Inc()
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr().String()
	body := get(t, base+"/metrics")
	for _, r := range []string{"client_names", "certificate", "no_certificate", "hung_up", "other"} {
		if want := `airnode_tls_handshake_failures_total{reason="` + r + `"} `; !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var rep metrics.StatsReport
	if err := json.Unmarshal([]byte(get(t, base+"/stats")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Counters["tls.handshake_failures_client_names"] < 2 || rep.Counters["tls.handshake_failures_hung_up"] < 1 {
		t.Errorf("/stats counters: %v; want tls.handshake_failures_client_names >= 2, _hung_up >= 1", rep.Counters)
	}
}

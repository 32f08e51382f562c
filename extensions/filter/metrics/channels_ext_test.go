package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/counters"
)

// tester18 N3: closes by the exchange's guards, backpressure stalls and
// answers for ids never sent reach /metrics (one family labelled by
// reason) and /stats (stats --json) under their dotted names.
func TestN3_ChannelGuardCountersExported(t *testing.T) {
	ch := &counters.Channels
	ch.ProtocolErrors.Add(3)
	ch.TooManyPings.Add(2)
	ch.FirstFrameTimeouts.Add(600)
	ch.Stalls.Inc()
	ch.Unsolicited.Add(5)
	ch.LateAnswers.Add(7)

	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr().String()
	body := get(t, base+"/metrics")
	for _, want := range []string{
		`airnode_channels_closed_total{reason="protocol_error"} `,
		`airnode_channels_closed_total{reason="too_many_pings"} `,
		`airnode_channels_closed_total{reason="first_frame_timeout"} `,
		`airnode_channels_closed_total{reason="heartbeat"} `,
		`airnode_backpressure_stalls_total `,
		`airnode_unsolicited_answers_total `,
		`airnode_late_answers_total `,
		`# TYPE airnode_channels_closed_total counter`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var rep metrics.StatsReport
	if err := json.Unmarshal([]byte(get(t, base+"/stats")), &rep); err != nil {
		t.Fatal(err)
	}
	for key, min := range map[string]uint64{
		"channels.closed_protocol_error":      3,
		"channels.closed_too_many_pings":      2,
		"channels.closed_first_frame_timeout": 600,
		"channels.stalls":                     1,
		"channels.unsolicited_answers":        5,
		"channels.late_answers":               7,
	} {
		if got, ok := rep.Counters[key]; !ok || got < min {
			t.Errorf("/stats counters[%q] = %d (present %v), want at least %d", key, got, ok, min)
		}
	}
	if _, ok := rep.Counters["channels.closed_heartbeat"]; !ok {
		t.Error("/stats lacks channels.closed_heartbeat")
	}
}

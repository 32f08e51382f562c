package metrics

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/airnode/airnode/spi"
)

// TestCollectorMatchesClientGolang checks that the call families read from
// the series print exactly as client_golang's CounterVec, GaugeVec and
// HistogramVec (what the registry used before issue 9) print the same
// calls: bucket edges (a latency equal to a bound is in that bound's
// bucket), +Inf, sums, in-flight calls and series that saw no call.
func TestCollectorMatchesClientGolang(t *testing.T) {
	labels := []string{"side", "service", "method"}
	ref := prometheus.NewRegistry()
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "airnode_calls_total", Help: "Calls completed, by side, service key and method.",
	}, labels)
	inFlight := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "airnode_calls_in_flight", Help: "Calls started and not yet completed.",
	}, labels)
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "airnode_call_duration_seconds", Help: "Call latency in seconds, as the filter saw it.",
		Buckets: LatencyBuckets,
	}, labels)
	ref.MustRegister(calls, inFlight, latency)

	reg := NewRegistry()
	type call struct {
		side            spi.Side
		service, method string
		d               time.Duration
		st              spi.Status
		open            bool // still in flight
	}
	var cs []call
	for _, d := range []time.Duration{0, time.Microsecond, 100 * time.Microsecond, 100*time.Microsecond + 1,
		200 * time.Microsecond, 3 * time.Millisecond, 6553600 * time.Microsecond, 7 * time.Second, time.Hour} {
		cs = append(cs, call{spi.Provider, "demo.Echo", "Echo", d, spi.StatusOK, false})
	}
	cs = append(cs,
		call{spi.Consumer, "demo.Echo", "Echo", 150 * time.Microsecond, spi.StatusServerTimeout, false},
		call{spi.Consumer, "demo.Echo", "Sleep", 0, spi.StatusOK, true},
		call{spi.Consumer, "g/demo.Echo:1.0", "Info", 0, spi.StatusOK, true})
	for _, c := range cs {
		lv := []string{string(c.side), c.service, c.method}
		s := reg.seriesFor(c.side, c.service, c.method)
		s.begin()
		g, n, h := inFlight.WithLabelValues(lv...), calls.WithLabelValues(lv...), latency.WithLabelValues(lv...)
		g.Inc()
		if c.open {
			continue
		}
		s.end(c.d, c.st, false, false, time.Since(clockBase))
		g.Dec()
		n.Inc()
		h.Observe(c.d.Seconds())
	}
	text := func(g prometheus.Gatherer) string {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, mf := range mfs {
			switch mf.GetName() {
			case "airnode_calls_total", "airnode_calls_in_flight", "airnode_call_duration_seconds":
				if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
					t.Fatal(err)
				}
			}
		}
		return b.String()
	}
	want, got := text(ref), text(reg.Prometheus())
	if got != want {
		t.Fatalf("exposition differs\n--- got\n%s\n--- want (client_golang)\n%s", got, want)
	}
	if testing.Verbose() {
		t.Log(got)
	}
}

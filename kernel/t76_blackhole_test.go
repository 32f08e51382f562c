package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
)

const msgEjectionEndedNotConnected = "kernel: provider's ejection ended; it is still not connected, reconnecting"

// providerReport is what an on-call engineer reads of one provider: the
// airnode_consumer_providers gauge's series for its service, the /stats
// JSON row and the airnode stats table's STATE.
type providerReport struct {
	gauge map[string]string // state -> sample value, from /metrics
	row   map[string]any    // /stats "providers" row
	table string            // the table's line
}

func reportOf(t *testing.T, reg *metrics.Registry, service, provider string) providerReport {
	t.Helper()
	rep := providerReport{gauge: map[string]string{}}
	rec := httptest.NewRecorder()
	reg.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		prefix := `airnode_consumer_providers{service="` + service + `",state="`
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			state, value, _ := strings.Cut(rest, `"} `)
			rep.gauge[state] = value
		}
	}
	rec = httptest.NewRecorder()
	reg.StatsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/stats", nil))
	var stats struct {
		Providers []map[string]any `json:"providers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &stats); err != nil {
		t.Fatalf("/stats: %v: %s", err, rec.Body.String())
	}
	for _, p := range stats.Providers {
		if p["service"] == service && p["provider"] == provider {
			rep.row = p
		}
	}
	var table bytes.Buffer
	if err := metrics.WriteProviders(&table, reg.Providers()); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(table.String(), "\n") {
		if strings.Contains(line, provider) {
			rep.table = line
		}
	}
	return rep
}

// says reports whether every reader says state for the provider: the
// service's gauge (the test's other provider is available throughout),
// /stats' state and the table.
func (r providerReport) says(state string) bool {
	for _, s := range []string{metrics.StateAvailable, metrics.StateUnavailable, metrics.StateEjected} {
		n := 0
		if s == metrics.StateAvailable {
			n++ // the good provider
		}
		if s == state {
			n++
		}
		want := fmt.Sprint(n)
		if r.gauge[s] != want {
			return false
		}
	}
	return r.row != nil && r.row["state"] == state && strings.Contains(r.table, "  "+state+" ")
}

func (r providerReport) String() string {
	return fmt.Sprintf("gauge %v, /stats %v, table %q", r.gauge, r.row, r.table)
}

// TestT76_BlackHoledProviderIsUnavailableWhileEjected (tester76 #1, #2):
// one of two providers' path goes dark under load (no FIN, no RST, dials
// unanswered). Its calls time out and outlier detection ejects it; the
// liveness check closes its connection and the consumer redials, each
// dial timing out. While it is ejected and not connected, the gauge, the
// /stats row and the table all say unavailable (not ejected); the end of
// the ejection, still dark, logs that it ended and the provider is still
// not connected, not "back in use", which is logged once the path heals
// and the connection is up again. Counted: one connection lost (closed by
// the liveness check: reason liveness, not heartbeat), one re-made
// (airnode_reconnects_total 1), its dials in reconnect attempts, the
// failed ones as connect failures with reason timeout.
func TestT76_BlackHoledProviderIsUnavailableWhileEjected(t *testing.T) {
	_, goodAddr := namedProvider(t, "good")
	_, badAddr := namedProvider(t, "bad")
	px := testproxy.New(t, badAddr)
	c, logs := outlierConsumer(t)
	reg := metrics.NewRegistry()
	t.Cleanup(reg.AddProviders(c.ProviderStats))
	t.Cleanup(reg.AddReferences(c.ReferenceKeys))
	// outlier.ejection 3s: long enough to see it ejected and disconnected
	// (the liveness check closes about 1 s after the first timeout), short
	// enough to see it end while the path is still dark
	r := refer(t, c, "airnode://"+goodAddr+","+px.Addr()+"/t12.Who?timeout=500ms&connect.timeout=300ms&reconnect.backoff=100ms&outlier.ejection=3s")
	eventually(t, "both providers connected", func() bool { return len(r.Providers()) == 2 })
	if rep := reportOf(t, reg, "t12.Who", px.Addr()); !rep.says(metrics.StateAvailable) {
		t.Fatalf("before the black hole: %v, want available", rep)
	}
	hb, tr := &counters.Heartbeat, &counters.Transport
	lost, remade, attempts := hb.ConnectionsLost.Load(), hb.Reconnects.Load(), hb.ReconnectAttempts.Load()
	liveness, idle := hb.LivenessClosed.Load(), hb.IdleClosed.Load()
	timeouts, refused, other := tr.ConnectTimeout.Load(), tr.ConnectRefused.Load(), tr.ConnectOther.Load()

	l := startCalls(t, r, 8)
	time.Sleep(200 * time.Millisecond)
	px.Unreachable(true)
	if !waitFor(10*time.Second, func() bool { return len(logs.find(msgEjected)) > 0 }) {
		t.Fatal("the black-holed provider was not ejected within 10 s")
	}
	if !waitFor(10*time.Second, func() bool { return hb.LivenessClosed.Load() > liveness }) {
		t.Fatal("the liveness check did not close the black-holed connection within 10 s")
	}
	ej := logs.find(msgEjected)[0]
	until := ej.at.Add(3 * time.Second)
	// ejected and not connected: unavailable, everywhere
	var rep providerReport
	if !waitFor(time.Until(until.Add(-300*time.Millisecond)), func() bool {
		rep = reportOf(t, reg, "t12.Who", px.Addr())
		return rep.says(metrics.StateUnavailable)
	}) {
		t.Fatalf("ejected and not connected: %v, want unavailable (the connection wins)", rep)
	}
	if time.Now().After(until) {
		t.Skipf("the machine is too slow: the ejection ended before it could be read")
	}
	t.Logf("ejected and not connected: %v", rep)
	if rep.row["ejected"] != true || rep.row["connected"] != false {
		t.Errorf("/stats row %v: want ejected true, connected false", rep.row)
	}

	// the ejection ends while the path is still dark
	if !waitFor(5*time.Second, func() bool { return len(logs.find(msgEjectionEndedNotConnected)) > 0 }) {
		t.Fatalf("no %q line after the ejection's end; back lines %v", msgEjectionEndedNotConnected, logs.find(msgBack))
	}
	if back := logs.find(msgBack); len(back) != 0 {
		t.Fatalf("logged %v while the provider is still unreachable", back)
	}
	ended := logs.find(msgEjectionEndedNotConnected)[0]
	t.Logf("at the ejection's end: %q %v", ended.msg, ended.attrs)
	if ended.attrs["provider"] != px.Addr() || ended.attrs["ejected_for"] != "3s" {
		t.Errorf("ejection-end line %v, want provider %s, ejected_for 3s", ended.attrs, px.Addr())
	}
	if rep := reportOf(t, reg, "t12.Who", px.Addr()); !rep.says(metrics.StateUnavailable) {
		t.Errorf("after the ejection, still dark: %v, want unavailable", rep)
	}
	time.Sleep(500 * time.Millisecond)
	if back := logs.find(msgBack); len(back) != 0 {
		t.Fatalf("logged %v while the provider is still unreachable", back)
	}

	// the path heals: reconnected, then back in use, once
	healed := time.Now()
	px.Unreachable(false)
	if !waitFor(10*time.Second, func() bool { return len(logs.find(msgBack)) > 0 }) {
		t.Fatal("no 'back in use' line within 10 s of the heal")
	}
	back := logs.find(msgBack)
	if len(back) != 1 || back[0].at.Before(healed) || back[0].attrs["provider"] != px.Addr() || back[0].attrs["not_connected_for"] == "" {
		t.Errorf("back lines %v, want one after the heal naming %s with not_connected_for", back, px.Addr())
	}
	eventually(t, "the provider available again", func() bool {
		return reportOf(t, reg, "t12.Who", px.Addr()).says(metrics.StateAvailable)
	})
	l.end()

	t.Logf("after the heal: %q %v", back[0].msg, back[0].attrs)
	reconnected := logs.find("kernel: reconnected to provider")
	if len(reconnected) != 1 {
		t.Fatalf("reconnect lines %v, want 1", reconnected)
	}
	var dials uint64
	fmt.Sscan(reconnected[0].attrs["attempts"], &dials)
	if dials < 2 {
		t.Errorf("reconnected after %d attempts, want at least 2 (a dial into the dark path timed out)", dials)
	}
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"connections lost", hb.ConnectionsLost.Load() - lost, 1},
		{"reconnects (connections re-made)", hb.Reconnects.Load() - remade, 1},
		{"reconnect attempts (dials)", hb.ReconnectAttempts.Load() - attempts, dials},
		{"channels closed by the liveness check", hb.LivenessClosed.Load() - liveness, 1},
		{"channels closed by a heartbeat verdict", hb.IdleClosed.Load() - idle, 0},
		{"connect failures, reason timeout", tr.ConnectTimeout.Load() - timeouts, dials - 1},
		{"connect failures, reason refused", tr.ConnectRefused.Load() - refused, 0},
		{"connect failures, reason other", tr.ConnectOther.Load() - other, 0},
	} {
		t.Logf("%s: %d", c.name, c.got)
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestT76_DialFailureReason (tester76 #2): a dial that times out (a
// listener whose accept queue is full drops the SYN: no answer) is
// reason timeout, one to a port nothing listens on refused; a first
// ping's timeout is neither (the provider accepted the connection).
func TestT76_DialFailureReason(t *testing.T) {
	px := testproxy.New(t, "")
	px.Unreachable(true)
	_, err := net.DialTimeout("tcp", px.Addr(), 200*time.Millisecond)
	if got := dialFailureReason(dialError{err}); got != reasonTimeout {
		t.Errorf("dial into the dark (%v): %q, want %q", err, got, reasonTimeout)
	}
	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = net.DialTimeout("tcp", addr, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial to a closed port: %v, want ECONNREFUSED", err)
	}
	if got := dialFailureReason(dialError{err}); got != reasonRefused {
		t.Errorf("dial to a closed port (%v): %q, want %q", err, got, reasonRefused)
	}
	flat := dialError{errors.New("smux: dial tcp " + addr + ": i/o timeout (connect.timeout 3s bounds the dial)")}
	if got := dialFailureReason(flat); got != reasonTimeout {
		t.Errorf("a flattened dial timeout: %q, want %q", got, reasonTimeout)
	}
	if got := dialFailureReason(firstPingError(errors.New("timed out"), "", "smux", time.Second, time.Second, false, false)); got != "" {
		t.Errorf("a first ping's error: %q, want \"\" (other)", got)
	}
}

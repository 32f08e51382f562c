package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// airnode stats ADDR prints the table of a /stats endpoint, or its JSON.
func TestStatsCommand(t *testing.T) {
	reg := metrics.NewRegistry()
	f, err := metrics.NewBuilder(reg).Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=provider"))
	if err != nil {
		t.Fatal(err)
	}
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), nil)
	for range 4 {
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	}
	srv, err := metrics.Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"stats", srv.Addr().String()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "SIDE") || !strings.Contains(out.String(), "provider  demo.Echo  Echo    4 ") ||
		!strings.Contains(out.String(), " TPS/10s  TPS/avg ") || !strings.Contains(out.String(), "\nTPS/10s: calls/s over the last 10 s (since the first call when it is more recent, at least 1 s); TPS/avg: calls/s since the method's first call; FAIL/10s: failed calls/s over the same window\n") {
		t.Errorf("table:\n%s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"stats", "--json", "http://" + srv.Addr().String()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep metrics.StatsReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Methods) != 1 || rep.Methods[0].Count != 4 ||
		rep.Methods[0].RecentTPS <= 0 || rep.Methods[0].RecentWindowSeconds < 1 || rep.Methods[0].RecentWindowSeconds > 10 || rep.Methods[0].LifetimeTPS <= 0 {
		t.Errorf("json %s: %v", out.String(), err)
	}
	// the window is the one the rate is over: the 4 calls, first made
	// under 10 s ago (tester53 finding 9: 1 call, 1/7.9 s, said 10)
	if m := rep.Methods[0]; math.Abs(m.RecentTPS*m.RecentWindowSeconds-4) > 0.01 {
		t.Errorf("recent_tps %v over recent_window_s %v is not the 4 calls", m.RecentTPS, m.RecentWindowSeconds)
	}
	for _, key := range []string{`"throughput"`, `"recent_tps"`, `"recent_window_s"`, `"lifetime_tps"`} {
		if !strings.Contains(out.String(), key) {
			t.Errorf("json lacks %s:\n%s", key, out.String())
		}
	}
	addr := srv.Addr().String()
	srv.Close()
	errb.Reset()
	if code := run(context.Background(), []string{"stats", addr}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "metrics: stats from "+addr) {
		t.Errorf("closed endpoint: exit %d, stderr %q", code, errb.String())
	}
}

// airnode stats of serve's /stats (a metrics server with health) ends with
// the node line: its readiness, plugins down and warnings (tester16 #9:
// only /stats?format=text printed it).
func TestStatsCommandPrintsTheNodeLine(t *testing.T) {
	h := metrics.NewHealth()
	h.SetState(metrics.NodeServing, "")
	h.AddWarning("registry", func() error { return errors.New("session expired") })
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry(), metrics.WithHealth(h))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"stats", srv.Addr().String()}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "node: serving, ready; warning: registry: session expired\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("stats:\n%s\nwant it to end with %q", out.String(), want)
	}
}

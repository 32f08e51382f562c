package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestT92_WeightZeroIsNotAvailable (tester92 #1): a provider taken out
// with serve -p weight=0 ("Taking a provider out") is listed, connected
// and never picked; the real binary's bench --metrics counted it in
// airnode_consumer_providers{state="available"}, gave it
// airnode_consumer_provider_available 1 and stats printed STATE
// available, so the "can call no provider" alert never fired. It is now
// state weight0, available 0, while a provider warming up (weight 100,
// the default 10 m warm-up just begun) is available: the balancers pick
// it, at a smaller share.
func TestT92_WeightZeroIsNotAvailable(t *testing.T) {
	regDir := t.TempDir()
	out0 := serve(t, "127.0.0.1:0", regDir, "-p", "weight=0")
	warm := serve(t, "127.0.0.1:0", regDir)
	bm := startMetricsBench(t, "--registry", out0.reg, "demo.Echo", "--duration", "60s", "-c", "1")
	maddr := bm.addr
	value := func(body, re string) string {
		if m := regexp.MustCompile(`(?m)^` + re + ` (\S+)$`).FindStringSubmatch(body); m != nil {
			return m[1]
		}
		return "absent"
	}
	states := func(body, s string) string {
		return value(body, `airnode_consumer_providers\{service="demo\.Echo",state="`+s+`"\}`)
	}
	avail := func(body string, p *provider) string {
		return value(body, `airnode_consumer_provider_available\{provider="`+regexp.QuoteMeta(p.addr)+`",service="demo\.Echo"\}`)
	}
	var body string
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + maddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		if states(body, "weight0") == "1" && states(body, "available") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want 1 weight0 and 1 available provider on bench's /metrics within 40s:\n%s\nbench's output:\n%s",
				grepMetric(body, "airnode_consumer_provider"), bm.out.String())
		}
	}
	if u, e := states(body, "unavailable"), states(body, "ejected"); u != "0" || e != "0" {
		t.Errorf("unavailable %s, ejected %s; want 0, 0:\n%s", u, e, grepMetric(body, "airnode_consumer_providers{"))
	}
	if a0, aw := avail(body, out0), avail(body, warm); a0 != "0" || aw != "1" {
		t.Errorf("airnode_consumer_provider_available: weight 0 provider %s, warming-up provider %s; want 0, 1:\n%s",
			a0, aw, grepMetric(body, "airnode_consumer_provider_available"))
	}

	r := runCommand(t, 20*time.Second, nil, "stats", maddr)
	if r.code != 0 {
		t.Fatalf("stats: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		p     *provider
		state string
	}{{out0, "weight0"}, {warm, "available"}} {
		row := regexp.MustCompile(`(?m)^demo\.Echo\s+` + regexp.QuoteMeta(tc.p.addr) + `\s.*$`).FindString(r.stdout)
		if f := strings.Fields(row); len(f) < 8 || f[7] != tc.state {
			t.Errorf("stats: row of %s %q, want STATE %s:\n%s", tc.p.addr, row, tc.state, r.stdout)
		}
	}
	r = runCommand(t, 20*time.Second, nil, "stats", "--json", maddr)
	var rep struct {
		Providers []struct {
			Provider   string `json:"provider"`
			State      string `json:"state"`
			Available  bool   `json:"available"`
			WeightZero bool   `json:"weight_zero"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Providers) != 2 {
		t.Fatalf("stats --json: %v, %d providers, want 2:\n%s", err, len(rep.Providers), r.stdout)
	}
	for _, p := range rep.Providers {
		zero := p.Provider == out0.addr
		if want := map[bool]string{true: "weight0", false: "available"}[zero]; p.State != want || p.WeightZero != zero || p.Available == zero {
			t.Errorf("stats --json: %+v; want state %s, weight_zero %v, available %v", p, want, zero, !zero)
		}
	}
	t.Logf("stats:\n%s", r.stdout)
}

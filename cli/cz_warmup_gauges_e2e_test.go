package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCZ_WarmupAndConnectionsOnMetricsAndStats (fix-cz): an SRE graphing
// a provider's ramp found the effective weight and the warm-up left only
// in registry ls, and no gauge of a provider's connected consumers. The
// real binary: two providers, one with warmup=30s, one with warmup=2s,
// called by bench --metrics. On the consumer's /metrics,
// airnode_consumer_provider_weight of the 30 s one is between 1 and 100
// and its airnode_consumer_provider_warmup_remaining_seconds above 0,
// while the 2 s one reaches 100 and 0; stats and stats --json say the
// same. The 30 s provider's own /metrics and stats count the bench's
// connection (airnode_provider_connections), 0 again once bench is gone.
func TestCZ_WarmupAndConnectionsOnMetricsAndStats(t *testing.T) {
	regDir := t.TempDir()
	cold := serve(t, "127.0.0.1:0", regDir, "-p", "warmup=30s", "--metrics", "127.0.0.1:0")
	pmetrics := metricsAddr(t, cold)
	short := serve(t, "127.0.0.1:0", regDir, "-p", "warmup=2s")
	bm := startMetricsBench(t, "--registry", cold.reg, "demo.Echo", "--duration", "60s", "-c", "1")
	maddr := bm.addr
	scrape := func(addr string) string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// value is the sample of family{labels} (labels sorted by name), -1 when absent
	value := func(body, family, labels string) float64 {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(family+"{"+labels+"}") + ` (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			return -1
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return -1
		}
		return v
	}
	of := func(p *provider) string { return `provider="` + p.addr + `",service="demo.Echo"` }
	const weight, left = "airnode_consumer_provider_weight", "airnode_consumer_provider_warmup_remaining_seconds"

	// The 2 s provider warms up within seconds; the 30 s one is still warming then.
	var body string
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		body = scrape(maddr)
		if value(body, weight, of(short)) == 100 && value(body, left, of(short)) == 0 && value(body, weight, of(cold)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want the warmup=2s provider at weight 100 with 0 s left on bench's /metrics within 40s:\n%s\nbench's output:\n%s",
				grepMetric(body, "airnode_consumer_provider_w"), bm.out.String())
		}
	}
	if w, l := value(body, weight, of(cold)), value(body, left, of(cold)); w < 1 || w >= 100 || l <= 0 || l > 30 {
		t.Errorf("warmup=30s provider: weight %v, %v s left; want 1 <= weight < 100 and 0 < left <= 30:\n%s", w, l, grepMetric(body, "airnode_consumer_provider_w"))
	}

	r := runCommand(t, 20*time.Second, nil, "stats", maddr)
	if r.code != 0 {
		t.Fatalf("stats: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		p              *provider
		weight, warmup string // the WEIGHT and WARM-UP columns
	}{{cold, `^[1-9][0-9]?/100$`, `^[1-9][0-9]?s$`}, {short, `^100$`, `^-$`}} {
		row := regexp.MustCompile(`(?m)^demo\.Echo\s+` + regexp.QuoteMeta(tc.p.addr) + `\s.*$`).FindString(r.stdout)
		f := strings.Fields(row)
		if len(f) < 10 || f[7] != "available" || !regexp.MustCompile(tc.weight).MatchString(f[8]) || !regexp.MustCompile(tc.warmup).MatchString(f[9]) {
			t.Errorf("stats: row of %s %q, want STATE available, WEIGHT %s, WARM-UP %s:\n%s", tc.p.addr, row, tc.weight, tc.warmup, r.stdout)
		}
	}
	r = runCommand(t, 20*time.Second, nil, "stats", "--json", maddr)
	var rep struct {
		Providers []struct {
			Provider        string  `json:"provider"`
			Weight          int64   `json:"weight"`
			EffectiveWeight int64   `json:"effective_weight"`
			WarmupLeftSec   float64 `json:"warmup_left_s"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Providers) != 2 {
		t.Fatalf("stats --json: %v, %d providers, want 2:\n%s", err, len(rep.Providers), r.stdout)
	}
	for _, p := range rep.Providers {
		warming := p.Provider == cold.addr
		ok := p.Weight == 100 && p.EffectiveWeight == 100 && p.WarmupLeftSec == 0
		if warming {
			ok = p.Weight == 100 && p.EffectiveWeight >= 1 && p.EffectiveWeight < 100 && p.WarmupLeftSec > 0 && p.WarmupLeftSec <= 30
		}
		if !ok {
			t.Errorf("stats --json: %+v; warming up %v", p, warming)
		}
	}

	// The provider's side: bench's connection, gone with bench.
	const conns = "airnode_provider_connections"
	if n := value(scrape(pmetrics), conns, `transport="smux"`); n < 1 {
		t.Errorf("the provider's %s{transport=\"smux\"} %v with bench connected, want >= 1:\n%s", conns, n, grepMetric(scrape(pmetrics), conns))
	}
	r = runCommand(t, 20*time.Second, nil, "stats", "--json", pmetrics)
	var prep struct {
		Connections map[string]int64 `json:"provider_connections"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &prep); err != nil || prep.Connections["smux"] < 1 {
		t.Errorf("provider's stats --json: %v, provider_connections %v, want smux >= 1", err, prep.Connections)
	}
	if r = runCommand(t, 20*time.Second, nil, "stats", pmetrics); !regexp.MustCompile(`(?m)^provider connections: [1-9]`).MatchString(r.stdout) {
		t.Errorf("provider's stats: no \"provider connections: N\" line with N >= 1:\n%s", r.stdout)
	}
	bm.stop()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n := value(scrape(pmetrics), conns, `transport="smux"`)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the provider's %s{transport=\"smux\"} %v 20s after bench stopped, want 0", conns, n)
		}
	}
	t.Logf("consumer:\n%s", grepMetric(body, "airnode_consumer_provider_w"))
}

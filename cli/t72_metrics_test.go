package cli

import (
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestT72_BenchMetricsProvidersAndBuildInfo (tester72 #5, #9): the real
// binary's bench --metrics has airnode_consumer_providers{service,state}
// (1 available with one provider; when SIGTERM has taken it out of the
// registry, the three states are still there at 0, so "== 0" alerts work
// where every airnode_consumer_provider_* series vanished) and
// airnode_build_info{version,revision,go_version} 1, by which a rolling
// upgrade's binaries are counted.
func TestT72_BenchMetricsProvidersAndBuildInfo(t *testing.T) {
	regDir := t.TempDir()
	p := serve(t, "127.0.0.1:0", regDir, "-p", "warmup=0")
	bm := startMetricsBench(t, "--registry", p.reg, "demo.Echo", "--duration", "60s", "-c", "1")
	defer bm.stop()
	series := func(s string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^airnode_consumer_providers\{service="demo\.Echo",state="` + s + `"\} (\S+)$`)
	}
	value := func(body, s string) string {
		if m := series(s).FindStringSubmatch(body); m != nil {
			return m[1]
		}
		return "absent"
	}
	waitFor := func(what string, ok func(body string) bool) string {
		t.Helper()
		var body string
		for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get("http://" + bm.addr + "/metrics")
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); ok(body) {
				return body
			}
		}
		t.Fatalf("no %s on bench's /metrics within 40s:\n%s\nbench's output:\n%s", what, grepMetric(body, "airnode_consumer_provider"), bm.out.String())
		return ""
	}
	body := waitFor("available provider", func(b string) bool { return value(b, "available") == "1" })
	if u, e := value(body, "unavailable"), value(body, "ejected"); u != "0" || e != "0" {
		t.Errorf("one available provider: unavailable %s, ejected %s; want 0, 0", u, e)
	}
	bi := regexp.MustCompile(`(?m)^airnode_build_info\{go_version="([^"]*)",revision="([^"]*)",version="([^"]+)"\} 1$`).FindStringSubmatch(body)
	if bi == nil || bi[1] != runtime.Version() {
		t.Errorf("want airnode_build_info{go_version=%q,revision=...,version=...} 1:\n%s", runtime.Version(), grepMetric(body, "airnode_build_info"))
	} else {
		t.Logf("build info: version %q revision %q go_version %q", bi[3], bi[2], bi[1])
	}
	if !strings.Contains(body, "# TYPE airnode_build_info gauge\n") {
		t.Errorf("airnode_build_info is not a gauge:\n%s", grepMetric(body, "airnode_build_info"))
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	body = waitFor("zero providers", func(b string) bool {
		return value(b, "available") == "0" && value(b, "unavailable") == "0" && value(b, "ejected") == "0"
	})
	t.Logf("after the provider left:\n%s", grepMetric(body, "airnode_consumer_providers{"))
}

// grepMetric returns the lines of body holding s.
func grepMetric(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

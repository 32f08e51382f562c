package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tester71 #6: a frozen plugin (SIGSTOP) showed only in the per-service
// `airnode health`; the node, /ready, /stats and /metrics all said
// healthy, and with two plugins frozen the service's reason named one.
// Now, with the greeter service plugin frozen: /metrics has
// airnode_plugin_unresponsive{plugin="greeter"} 1 and
// airnode_health_warning{check="plugin"} 1, /stats lists the warning
// naming the plugin and its service, /ready stays 200 (demo.Echo still
// serves), and `airnode health ADDR` (the node) is SERVING with a warning
// on stderr, exit 0, or exit 1 under --fail-on-warning. With the tenant
// filter plugin (in every service's chain) frozen too, greeter.Greeter's
// reason names both plugins and the node, no service serving, is
// NOT_SERVING. SIGCONT clears everything.
func TestJ6UnresponsivePluginShowsAtNodeLevel(t *testing.T) {
	tenant := buildPlugin(t, "github.com/airnode/airnode/examples/tenant/cmd/tenant")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: greeter, point: service, command: " + greeter + "}\n  - {name: tenant, point: filter, command: " + tenant + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", filepath.Join(dir, "reg"), "--config", cfg, "--metrics", "127.0.0.1:0", "-p", "tenant=acme")
	maddr := metricsAddr(t, p)
	waitProbe(t, maddr, "/ready", http.StatusOK, "serving", 10*time.Second)
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="greeter"} 0`, time.Second)
	pids := map[string]int{}
	for _, m := range pluginPID.FindAllStringSubmatch(p.logText(), -1) {
		pids[m[1]], _ = strconv.Atoi(m[2])
	}
	if pids["greeter"] == 0 || pids["tenant"] == 0 {
		t.Fatalf("serve did not start both plugins (%v):\n%s", pids, p.logText())
	}
	for _, pid := range pids {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
	if r := health(t, p.addr); r.code != 0 || r.stderr != "" {
		t.Fatalf("node health before the freeze: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	if err := syscall.Kill(pids["greeter"], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="greeter"} 1`, 30*time.Second)
	t.Logf("airnode_plugin_unresponsive 1 %v after SIGSTOP", time.Since(stopped).Round(time.Millisecond))
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_health_warning{check="plugin"} 1`, time.Second)
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="tenant"} 0`, time.Second)
	waitProbe(t, maddr, "/ready", http.StatusOK, "serving", time.Second)
	_, body := probeHTTP(t, maddr, "/stats")
	var stats struct {
		Health struct {
			Warnings []string `json:"warnings"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(body), &stats); err != nil {
		t.Fatalf("/stats: %v\n%s", err, body)
	}
	if w := strings.Join(stats.Health.Warnings, " | "); !strings.Contains(w, `plugin: "greeter" running: unresponsive`) || !strings.Contains(w, "(services greeter.Greeter)") {
		t.Fatalf("/stats health.warnings = %q; want the unresponsive greeter plugin and its service", stats.Health.Warnings)
	}
	// the node: SERVING (demo.Echo serves) with a warning naming greeter.Greeter
	waitFor(t, "node health warning of greeter.Greeter", func() bool {
		return strings.Contains(health(t, p.addr).stderr, "greeter.Greeter")
	})
	r := health(t, p.addr)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" ||
		!strings.Contains(r.stderr, "warning: the node on "+p.addr+" is SERVING, but not every service exported there serves: greeter.Greeter: service plugin \"greeter\" running: unresponsive") {
		t.Fatalf("node health with greeter frozen: exit %d, stdout %q, stderr %q; want 0 SERVING and a warning naming greeter.Greeter", r.code, r.stdout, r.stderr)
	}
	if r := health(t, "--fail-on-warning", p.addr); r.code != 1 || !strings.Contains(r.stderr, "greeter.Greeter") {
		t.Fatalf("node health --fail-on-warning with greeter frozen: exit %d, stdout %q, stderr %q; want 1 naming greeter.Greeter", r.code, r.stdout, r.stderr)
	}
	if r := health(t, p.addr, "demo.Echo"); r.code != 0 {
		t.Fatalf("demo.Echo health with greeter frozen: exit %d, %q %q; want SERVING", r.code, r.stdout, r.stderr)
	}

	if err := syscall.Kill(pids["tenant"], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="tenant"} 1`, 30*time.Second)
	waitFor(t, "greeter.Greeter's reason naming the tenant plugin too", func() bool {
		return strings.Contains(health(t, p.addr, "greeter.Greeter").stderr, `filter plugin "tenant"`)
	})
	r = health(t, p.addr, "greeter.Greeter")
	if r.code != 1 || !strings.Contains(r.stderr, `service plugin "greeter" running: unresponsive`) || !strings.Contains(r.stderr, `filter plugin "tenant" running: unresponsive`) {
		t.Fatalf("greeter.Greeter with both plugins frozen: exit %d, stderr %q; want NOT_SERVING naming both plugins", r.code, r.stderr)
	}
	waitFor(t, "the node NOT_SERVING with no service serving", func() bool { return health(t, p.addr).code == 1 })
	r = health(t, p.addr)
	if strings.TrimSpace(r.stdout) != "NOT_SERVING" || !strings.Contains(r.stderr, "no service exported on") ||
		!strings.Contains(r.stderr, `demo.Echo: filter plugin "tenant"`) || !strings.Contains(r.stderr, "greeter.Greeter: ") {
		t.Fatalf("node health with both plugins frozen: exit %d, stdout %q, stderr %q; want NOT_SERVING naming both services", r.code, r.stdout, r.stderr)
	}
	_, body = probeHTTP(t, maddr, "/stats")
	if err := json.Unmarshal([]byte(body), &stats); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(stats.Health.Warnings, " | "); !strings.Contains(w, `"greeter" running: unresponsive`) || !strings.Contains(w, `"tenant" running: unresponsive`) {
		t.Fatalf("/stats health.warnings = %q; want both plugins", stats.Health.Warnings)
	}

	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_health_warning{check="plugin"} 0`, 30*time.Second)
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="greeter"} 0`, time.Second)
	waitProbe(t, maddr, "/metrics", http.StatusOK, `airnode_plugin_unresponsive{plugin="tenant"} 0`, time.Second)
	waitFor(t, "node health clean after SIGCONT", func() bool {
		r := health(t, p.addr)
		return r.code == 0 && r.stderr == ""
	})
	if r := health(t, p.addr, "greeter.Greeter"); r.code != 0 {
		t.Fatalf("greeter.Greeter after SIGCONT: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// metricsAddrLine finds the --metrics address in serve's log.
var metricsAddrLine = regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`)

// metricsAddr returns the address serve's --metrics listens on.
func metricsAddr(t *testing.T, p *provider) string {
	t.Helper()
	m := metricsAddrLine.FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", p.logText())
	}
	return m[1]
}

// probeHTTP GETs path on addr (a new connection each time) and returns
// the status code and body; code 0 when the request failed.
func probeHTTP(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitProbe polls path on addr until it answers code with a body holding
// want, up to within, and returns the body.
func waitProbe(t *testing.T, addr, path string, code int, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c, b := probeHTTP(t, addr, path)
		if c == code && strings.Contains(b, want) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q after %v, want %d with %q", path, c, b, within, code, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tester16 #9: /ready is 200 "serving" once serve has registered its
// services, and /live 200; a SIGTERM turns /ready to 503 "draining" at
// once, while the RPC listener still accepts (the shutdown wait has not
// passed), so that a load balancer stops sending before the listener
// closes; /live stays 200 during the drain, /metrics says
// airnode_draining 1, and the call in flight (Sleep) still succeeds.
func TestReadyLive_SIGTERMDrainAnswers503First(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0", "--shutdown-wait", "1s")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
	waitProbe(t, addr, "/live", http.StatusOK, "alive", time.Second)
	m := waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_ready 1\n", time.Second)
	if !strings.Contains(m, "airnode_draining 0\n") {
		t.Fatal("/metrics lacks airnode_draining 0")
	}
	if _, s := probeHTTP(t, addr, "/stats"); !strings.Contains(s, `"state": "serving"`) || !strings.Contains(s, `"ready": true`) {
		t.Fatalf("/stats health: %s", s)
	}

	ref := refer(t, p.url("demo.Echo")+"?timeout=10s")
	done := make(chan error, 1)
	go func() {
		_, err := ref.Invoke(context.Background(), "Sleep", 2500)
		done <- err
	}()
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 1`, 5*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	body := waitProbe(t, addr, "/ready", http.StatusServiceUnavailable, "draining: SIGTERM received", 2*time.Second)
	t.Logf("/ready during the drain: %q", body)
	// the RPC listener still accepts: /ready went 503 first
	c, err := net.DialTimeout("tcp", p.addr, time.Second)
	if err != nil {
		t.Fatalf("the RPC listener was closed when /ready first answered 503: %v", err)
	}
	c.Close()
	waitProbe(t, addr, "/live", http.StatusOK, "alive", time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_draining 1\n", time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_ready 0\n", time.Second)
	if _, s := probeHTTP(t, addr, "/stats"); !strings.Contains(s, `"state": "draining"`) {
		t.Fatalf("/stats health during the drain: %s", s)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the Sleep in flight at SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Sleep in flight did not end")
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

// providerEntries lists the file registry's provider entries of service
// in the registry directory dir.
func providerEntries(t *testing.T, dir, service string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, service, "providers"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// tester16 #9: a service plugin killed under restart: never leaves the
// registry within a second or two (it answered SERVICE_NOT_FOUND "plugin
// unavailable" to every consumer that picked it, registered forever);
// serve says so, /ready answers 503 naming the plugin,
// airnode_plugin_up{plugin="greeter"} goes from 1 to 0, demo.Echo stays
// registered, and the shutdown is still clean.
func TestPluginRestartNeverDiesLeavesTheRegistry(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - {name: greeter, point: service, restart: never, command: " + greeter + "}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	regDir := filepath.Join(dir, "reg")
	p := serve(t, "127.0.0.1:0", regDir, "--config", cfg, "--metrics", "127.0.0.1:0")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_up{plugin="greeter"} 1`, time.Second)
	if n := len(providerEntries(t, regDir, "greeter.Greeter")); n != 1 {
		t.Fatalf("greeter.Greeter has %d provider entries, want 1", n)
	}
	m := pluginPID.FindStringSubmatch(p.logText())
	if m == nil || m[1] != "greeter" {
		t.Fatalf("serve did not start the plugin:\n%s", p.logText())
	}
	pid := 0
	for _, c := range m[2] {
		pid = pid*10 + int(c-'0')
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	deadline := killed.Add(3 * time.Second)
	for len(providerEntries(t, regDir, "greeter.Greeter")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("greeter.Greeter still registered 3s after its plugin died for good: %v", providerEntries(t, regDir, "greeter.Greeter"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("greeter.Greeter left the registry %v after kill -9", time.Since(killed).Round(time.Millisecond))
	body := waitProbe(t, addr, "/ready", http.StatusServiceUnavailable, `"greeter"`, time.Second)
	t.Logf("/ready: %q", body)
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_up{plugin="greeter"} 0`, time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_ready 0\n", time.Second)
	if !strings.Contains(p.logText(), "service plugin is down for good") {
		t.Fatalf("serve did not say it unregistered the plugin's service:\n%s", p.logText())
	}
	if n := len(providerEntries(t, regDir, "demo.Echo")); n != 1 {
		t.Fatalf("demo.Echo has %d provider entries, want 1 (only the dead plugin's service leaves)", n)
	}
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "1")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

// tester72 #1, #3, #4 and tester71 #12, with the real binary: a SIGTERM
// to a service plugin under the default restart policy hands its calls
// over to a new process (its service stays registered and ready); a
// kill -9 is restarted; each counts in airnode_plugin_restarts_total and
// /stats' plugin_restarts, and the last exit's time is in
// airnode_plugin_last_exit_timestamp_seconds. At serve's stop the
// plugin's exit is logged before "airnode serve: stopped", at info.
func TestPluginSIGTERMHandoverAndRestartMetrics(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(cfg, []byte("plugins:\n  - {name: greeter, point: service, command: "+greeter+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", filepath.Join(dir, "reg"), "--config", cfg, "--metrics", "127.0.0.1:0")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_restarts_total{plugin="greeter"} 0`, time.Second)
	pidOf := func(text string) int {
		m := pluginPID.FindAllStringSubmatch(text, -1)
		if len(m) == 0 {
			t.Fatalf("serve did not start the plugin:\n%s", text)
		}
		pid, _ := strconv.Atoi(m[len(m)-1][2])
		return pid
	}
	first := pidOf(p.logText())
	if err := syscall.Kill(first, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_restarts_total{plugin="greeter"} 1`, 10*time.Second)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", time.Second)
	expectOK(t, call(t, nil, p.url("greeter.Greeter"), "Hello", `"Ann"`), `"Hello, Ann"`)
	second := pidOf(p.logText())
	if second == first || !strings.Contains(p.logText(), "took_over_from="+strconv.Itoa(first)) {
		t.Fatalf("no handover after the plugin's SIGTERM:\n%s", p.logText())
	}
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_restarts_total{plugin="greeter"} 2`, 10*time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, `airnode_plugin_last_exit_timestamp_seconds{plugin="greeter"} 1.`, time.Second)
	waitProbe(t, addr, "/stats", http.StatusOK, "\"plugin_restarts\": {\n      \"greeter\": 2\n    }", time.Second)
	waitProbe(t, addr, "/stats?format=text", http.StatusOK, "plugin restarts: greeter 2", time.Second)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	text := p.logText()
	exited := strings.LastIndex(text, `msg="plugin process exited"`)
	stopped := strings.Index(text, "airnode serve: stopped")
	if exited < 0 || stopped < 0 || exited > stopped || !strings.Contains(text, `reason="the host is closing"`) {
		t.Errorf("the plugin's exit at the stop is not logged before \"airnode serve: stopped\", with the host's reason:\n%s", text)
	}
}

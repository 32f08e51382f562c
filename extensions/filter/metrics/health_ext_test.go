package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// probe fetches path from srv and returns the status code and body.
func probe(t *testing.T, srv *metrics.Server, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+srv.Addr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A Server given WithHealth answers /ready 503 while the node starts,
// 200 "serving" once it serves, 503 with the failing check's reason
// while a check fails (a registry whose session expired) and 503
// "draining" from the shutdown signal on; /live is 200 throughout. The
// state is in /metrics (airnode_ready, airnode_draining,
// airnode_plugin_up) and in /stats.
func TestHealthReadyLiveMetricsAndStats(t *testing.T) {
	h := metrics.NewHealth()
	var lost atomic.Bool
	h.AddCheck("registry", func() error {
		if lost.Load() {
			return errors.New("session expired")
		}
		return nil
	})
	var greeterUp atomic.Bool
	greeterUp.Store(true)
	h.SetPlugins(func() []metrics.PluginUp {
		return []metrics.PluginUp{{Name: "greeter", Up: greeterUp.Load()}, {Name: "acme.p2c", Up: true}}
	})
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry(), metrics.WithHealth(h))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	expect := func(path string, code int, body string) {
		t.Helper()
		c, b := probe(t, srv, path)
		if c != code || !strings.Contains(b, body) {
			t.Fatalf("GET %s: %d %q, want %d with %q", path, c, b, code, body)
		}
	}
	expect("/ready", http.StatusServiceUnavailable, "starting")
	expect("/live", http.StatusOK, "alive")
	expect("/metrics", http.StatusOK, "airnode_ready 0\n")

	h.SetState(metrics.NodeServing, "")
	expect("/ready", http.StatusOK, "serving\n")
	expect("/metrics", http.StatusOK, "airnode_ready 1\n")
	expect("/metrics", http.StatusOK, "airnode_draining 0\n")
	expect("/metrics", http.StatusOK, `airnode_plugin_up{plugin="greeter"} 1`)
	expect("/metrics", http.StatusOK, "airnode_heartbeat_pings_sent_total") // the registry's series are still there

	lost.Store(true)
	greeterUp.Store(false)
	expect("/ready", http.StatusServiceUnavailable, "registry: session expired\n")
	expect("/metrics", http.StatusOK, `airnode_plugin_up{plugin="greeter"} 0`)
	expect("/stats?format=text", http.StatusOK, "node: serving, not ready: registry: session expired; plugins down: greeter\n")
	_, body := probe(t, srv, "/stats")
	var rep metrics.StatsReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	want := metrics.HealthReport{Ready: false, State: metrics.NodeServing, Reason: "registry: session expired",
		Plugins: map[string]bool{"greeter": false, "acme.p2c": true}}
	if rep.Health == nil || rep.Health.Ready != want.Ready || rep.Health.State != want.State || rep.Health.Reason != want.Reason ||
		len(rep.Health.Plugins) != 2 || rep.Health.Plugins["greeter"] || !rep.Health.Plugins["acme.p2c"] {
		t.Fatalf("/stats health %+v, want %+v", rep.Health, want)
	}
	lost.Store(false)
	expect("/ready", http.StatusOK, "serving")

	// A warning is reported, in /stats and /metrics, but leaves the node
	// ready (tester18 N2: a shared registry's outage must not take every
	// provider out of its load balancer).
	var zkDown atomic.Bool
	h.AddWarning("zookeeper", func() error {
		if zkDown.Load() {
			return errors.New("session expired")
		}
		return nil
	})
	expect("/metrics", http.StatusOK, `airnode_health_warning{check="zookeeper"} 0`)
	zkDown.Store(true)
	greeterUp.Store(true)
	expect("/ready", http.StatusOK, "serving")
	expect("/metrics", http.StatusOK, `airnode_health_warning{check="zookeeper"} 1`)
	expect("/stats?format=text", http.StatusOK, "node: serving, ready; warning: zookeeper: session expired\n")
	_, body = probe(t, srv, "/stats")
	rep = metrics.StatsReport{}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Health == nil || !rep.Health.Ready || len(rep.Health.Warnings) != 1 || rep.Health.Warnings[0] != "zookeeper: session expired" {
		t.Fatalf("/stats health %+v, want ready with the warning", rep.Health)
	}
	zkDown.Store(false)

	h.SetState(metrics.NodeDraining, "SIGTERM signal received")
	expect("/ready", http.StatusServiceUnavailable, "draining: SIGTERM signal received\n")
	expect("/metrics", http.StatusOK, "airnode_draining 1\n")
	expect("/metrics", http.StatusOK, "airnode_ready 0\n")
	expect("/live", http.StatusOK, "alive")
}

// Without WithHealth nothing changes: /ready and /live are not served
// and /stats has no health.
func TestNoHealthWithoutWithHealth(t *testing.T) {
	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, p := range []string{"/ready", "/live"} {
		if c, _ := probe(t, srv, p); c != http.StatusNotFound {
			t.Fatalf("GET %s: %d, want 404", p, c)
		}
	}
	if _, b := probe(t, srv, "/stats"); strings.Contains(b, "health") {
		t.Fatalf("/stats has health: %s", b)
	}
	if _, b := probe(t, srv, "/metrics"); strings.Contains(b, "airnode_ready") {
		t.Fatal("/metrics has airnode_ready")
	}
}

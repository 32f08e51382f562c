package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAL1_QueuedZooKeeperEntryIsARegistryWarning (tester80 #1): `serve`
// with a ZooKeeper registry that nobody answers and check=false queued
// its entry and reported itself ready and healthy with no warning,
// though no consumer could find it. The real binary, a real ZooKeeper
// stopped, then started: /ready stays 200 (a warning, not a 503), while
// the entry is queued airnode_health_warning{check="registry"} is 1 and
// /stats lists the warning naming demo.Echo; once ZooKeeper is started
// and the entry created, the warning is 0 and the entry is listed.
func TestAL1_QueuedZooKeeperEntryIsARegistryWarning(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	zks.Stop()
	p := startServe(t, "127.0.0.1:0", "zookeeper://"+zks.Addr()+"?check=false&connect.timeout=1s", nil, "",
		"--metrics", "127.0.0.1:0", "--shutdown-wait", "0s")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 1\n", 10*time.Second)
	if code, body := probeHTTP(t, addr, "/ready"); code != http.StatusOK {
		t.Errorf("/ready %d %q while the entry is queued: want 200 (a warning, not a reason to be unready)", code, body)
	}
	_, body := probeHTTP(t, addr, "/stats")
	var rep struct {
		Health struct {
			Ready    bool     `json:"ready"`
			Warnings []string `json:"warnings"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("/stats: %v\n%s", err, body)
	}
	t.Logf("/stats health: %+v", rep.Health)
	if !rep.Health.Ready || len(rep.Health.Warnings) != 1 || !strings.HasPrefix(rep.Health.Warnings[0], "registry: ") ||
		!strings.Contains(rep.Health.Warnings[0], "provider entries of demo.Echo are not in ZooKeeper: queued") {
		t.Errorf("/stats health %+v: want ready, one registry warning that demo.Echo's entry is queued", rep.Health)
	}

	if err := zks.Restart(); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 0\n", 20*time.Second)
	c := zkClient(t, zks)
	if got, err := zkProviders(t, c); err != nil || len(got) != 1 {
		t.Errorf("providers once the warning cleared: %v, %v; want the entry", got, err)
	}
}

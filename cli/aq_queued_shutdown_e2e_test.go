package cli

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAQ_QueuedZooKeeperEntryShutdownAndHealth (tester81 #4, #5, #6):
// `serve` with check=false and a ZooKeeper that nobody answers queues
// its entry. `airnode health` said nothing of the registry warning that
// /stats shows: it says it now on stderr, SERVING, exit 0. At SIGINT it
// warned "could not unregister demo.Echo ...: its entry stays listed
// until ZooKeeper expires this session" and waited shutdown-wait for an
// entry that was never created: now it says, at Info, that there was
// nothing to remove, and does not wait. A second serve, queued the same
// way, says at Info that its entry was created once ZooKeeper is
// started, with how long it was queued, and then warns no more. The
// real binary, a real ZooKeeper stopped, then started.
func TestAQ_QueuedZooKeeperEntryShutdownAndHealth(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	zks.Stop()
	reg := "zookeeper://" + zks.Addr() + "?check=false&connect.timeout=1s"
	p1 := startServe(t, "127.0.0.1:0", reg, nil, "", "--metrics", "127.0.0.1:0")
	p2 := startServe(t, "127.0.0.1:0", reg, nil, "", "--metrics", "127.0.0.1:0")
	waitProbe(t, metricsAddr(t, p1), "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 1\n", 10*time.Second)

	for _, args := range [][]string{{p1.addr}, {p1.addr, "demo.Echo"}, {"--fail-on-warning", p1.addr}} {
		r := health(t, args...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != "SERVING" ||
			!strings.Contains(r.stderr, "is SERVING, with a node warning: registry: zookeeper registry zookeeper://"+zks.Addr()+"/airnode: provider entries of demo.Echo are not in ZooKeeper: queued") {
			t.Errorf("health %q while the entry is queued: exit %d, stdout %q, stderr %q; want 0 SERVING and the registry warning on stderr", args, r.code, r.stdout, r.stderr)
		}
	}

	start := time.Now()
	if err := p1.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p1.wait(t, 20*time.Second); code != 0 {
		t.Errorf("serve exit %d after SIGINT; want 0", code)
	}
	took := time.Since(start)
	log := p1.logText()
	for _, bad := range []string{"could not unregister", "not unregistered", "stays listed", "waiting before closing listeners"} {
		if strings.Contains(log, bad) {
			t.Errorf("shutdown of a serve whose entry was only queued says %q; want no warning and no wait", bad)
		}
	}
	if !strings.Contains(log, "unregistered demo.Echo: its entry was never created in ZooKeeper (queued for want of a session); nothing to remove") {
		t.Errorf("shutdown does not say the queued entry was never created")
	}
	if !regexp.MustCompile(`airnode serve: shutting down" wait=0s `).MatchString(log) {
		t.Errorf("shutting down line does not say wait=0s")
	}
	if took > 2*time.Second {
		t.Errorf("shutdown took %v; want less than the 2s default wait (skipped)", took)
	}
	if t.Failed() {
		t.Logf("serve 1 log:\n%s", log)
	}

	if err := zks.Restart(); err != nil {
		t.Fatal(err)
	}
	waitProbe(t, metricsAddr(t, p2), "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 0\n", 20*time.Second)
	if !regexp.MustCompile(`level=INFO msg="queued provider entry of demo.Echo created in ZooKeeper after \S+ without a session \(check=false\)".* queued_for=\S+`).MatchString(p2.logText()) {
		t.Errorf("no INFO line saying the queued entry was created:\n%s", p2.logText())
	}
	if r := health(t, p2.addr); r.code != 0 || r.stderr != "" {
		t.Errorf("health once the entry is created: exit %d, stderr %q; want 0, no warning", r.code, r.stderr)
	}
}

package cli

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
)

// tester89 #2: bench (and call) under a ZooKeeper outage printed WARN
// "connection lost; keeping the last provider lists ..." and never that
// the registry was back: its "connected again" is at INFO, under the
// command's default level, warn. The line carries ends="connection
// lost", which the command shows at its default level: once per loss,
// after it, still at INFO. Real ZooKeeper, real binaries.
func TestT89_2_BenchSaysRegistryIsBack(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	serveWith(t, "127.0.0.1:0", zks.URL(""), "-p", "warmup=0")
	proxy := testproxy.New(t, zks.Addr())
	reg := "zookeeper://" + proxy.Addr() + "?session.timeout=20s"
	done := make(chan result, 1)
	go func() {
		done <- runCommand(t, 60*time.Second, noAirnodeEnv, "bench", "--registry", reg, "--duration", "8s", "-c", "2", "--json", "demo.Echo")
	}()
	time.Sleep(3 * time.Second) // bench's registry is up and lists the provider
	proxy.Refuse(true)
	proxy.Cut()
	time.Sleep(2 * time.Second)
	proxy.Refuse(false)
	r := <-done
	if r.code != 0 {
		t.Fatalf("bench: exit %d\n%s", r.code, r.stderr)
	}
	lost := regexp.MustCompile(`level=WARN msg="connection lost[^"]*"`)
	back := regexp.MustCompile(`level=INFO msg="connected again" .*ends="connection lost"`)
	lines := strings.Split(r.stderr, "\n")
	var nLost, nBack, iLost, iBack int
	for i, l := range lines {
		if lost.MatchString(l) {
			nLost, iLost = nLost+1, i
		}
		if back.MatchString(l) {
			nBack, iBack = nBack+1, i
		}
	}
	if nLost != 1 || nBack != 1 || iBack < iLost {
		t.Errorf("bench's stderr has %d connection-lost WARN and %d connected-again INFO lines (want 1 each, the INFO after the WARN):\n%s", nLost, nBack, r.stderr)
	}
	if strings.Contains(r.stderr, "level=INFO") && strings.Count(r.stderr, "level=INFO") != nBack {
		t.Errorf("bench's stderr has INFO lines other than the registry's connected again at its default level:\n%s", r.stderr)
	}
}

// tester89 #3: serve on ZooKeeper exited about 1.1 s after its
// "airnode serve: stopped" line (file registry: at once). The exit must
// follow that line promptly: within 500 ms (generous for a loaded
// machine; the registry's session is closed before the line), also
// after ZooKeeper was restarted under it. Real ZooKeeper, real binary.
func TestT89_3_ServeExitsPromptlyAfterStopped(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		zks := startZooKeeper(t)
		p := serveWith(t, "127.0.0.1:0", zks.URL("session.timeout=10s"), "--shutdown-wait", "100ms")
		if restart {
			zks.Stop()
			time.Sleep(2 * time.Second)
			if err := zks.Restart(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(p.logText(), `msg="connected again"`) {
				if time.Now().After(deadline) {
					t.Fatalf("serve not connected again to the restarted ZooKeeper:\n%s", p.logText())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var exited time.Time
		select {
		case <-p.done:
			exited = time.Now()
		case <-time.After(20 * time.Second):
			t.Fatalf("serve did not exit within 20s of SIGTERM:\n%s", p.logText())
		}
		m := regexp.MustCompile(`time=(\S+) level=INFO msg="airnode serve: stopped"`).FindStringSubmatch(p.logText())
		if m == nil {
			t.Fatalf("no stopped line:\n%s", p.logText())
		}
		stopped, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		gap := exited.Sub(stopped)
		t.Logf("ZooKeeper restarted under serve: %v; exit %v after the stopped line", restart, gap.Round(time.Millisecond))
		if gap > 500*time.Millisecond {
			t.Errorf("ZooKeeper restarted under serve: %v; serve exited %v after its stopped line, want within 500ms:\n%s", restart, gap.Round(time.Millisecond), p.logText())
		}
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fix-dg (tester100 #1, #2): a provider stopped (SIGSTOP) for 15 s, past
// its ZooKeeper session.timeout of 6 s, loses its registry entry with its
// session and gets it back on resuming (SIGCONT): the same process, so
// bench counts no restart, and its connection, closed by the liveness
// check while it was stopped, is lost once and re-made once, whether the
// entry left before that close (session.timeout=3s: the consumer had
// released the connection and was waiting for its calls) or after it
// (12s: the connection was redialing). The stopped provider's own log
// says that it did not run (the README's "connection lost: this process
// did not run for ..."). Real ZooKeeper, real binary.
func TestDG_StoppedPastSessionIsNoRestart(t *testing.T) {
	for _, c := range []struct{ session, listen string }{{"3s", "127.0.0.1:0"}, {"12s", "127.0.0.1:0"}} {
		t.Run(c.session, func(t *testing.T) {
			t.Parallel()
			stoppedPastSession(t, startZooKeeper(t).Addr(), c.listen, c.session) // its own: each bench lists one provider
		})
	}
}

// stoppedPastSession runs TestDG_StoppedPastSessionIsNoRestart's case of
// a provider listening on listen, its ZooKeeper (at zk) session.timeout
// session.
func stoppedPastSession(t *testing.T, zk, listen, session string) {
	p := startServe(t, listen, "zookeeper://"+zk+"?session.timeout="+session, nil, "")
	cmd, out, errb := benchStart(t, "--registry", "zookeeper://"+zk, "demo.Echo",
		"--duration", "25s", "-c", "8", "--timeout", "10s", "--warmup", "0", "--json")
	time.Sleep(2 * time.Second)
	p.stopFor(t, 15*time.Second)
	err := cmd.Wait()
	var o struct {
		Calls     int64  `json:"calls"`
		OK        int64  `json:"ok"`
		Lost      uint64 `json:"connections_lost"`
		Remade    uint64 `json:"reconnects"`
		Dials     uint64 `json:"reconnect_attempts"`
		Liveness  uint64 `json:"liveness_closes"`
		Restarted int    `json:"providers_restarted"`
		Left      int    `json:"providers_left"`
		DownAtEnd int    `json:"connections_down_at_end"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &o); jerr != nil {
		t.Fatalf("bench: %v; stdout %q: %v\nstderr %s", err, out.String(), jerr, errb.String())
	}
	t.Logf("%d calls, %d ok; lost %d, re-made %d (%d dials), liveness closes %d, restarted %d, left %d, down at end %d",
		o.Calls, o.OK, o.Lost, o.Remade, o.Dials, o.Liveness, o.Restarted, o.Left, o.DownAtEnd)
	if o.Lost != 1 || o.Remade != 1 || o.Dials < 1 || o.Restarted != 0 || o.Left != 0 || o.DownAtEnd != 0 {
		t.Errorf("lost %d, re-made %d (%d dials), restarted %d, left %d, down at end %d; want 1, 1 (1 or more), 0, 0, 0\nstderr %s",
			o.Lost, o.Remade, o.Dials, o.Restarted, o.Left, o.DownAtEnd, errb.String())
	}
	log := p.logText()
	if !strings.Contains(log, "session expired") {
		t.Errorf("the provider's session did not expire while it was stopped 15 s (session.timeout=%s): the test proves nothing:\n%s", session, log)
	}
	if !strings.Contains(log, "connection lost: this process did not run for at least ") {
		t.Errorf("the stopped provider's log does not say that it did not run:\n%s", log)
	}
}

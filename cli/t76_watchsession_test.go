package cli

import (
	"regexp"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
)

// tester76 #3: registry watch --json printed nothing on stdout while
// ZooKeeper was away (only text on stderr), so a script could not tell
// "no change" from "a list kept while ZooKeeper is away". It now prints
// registry events: disconnected when the connection is lost, connected
// when the session is back; the text form prints the same as "!" lines.
func TestT76_3_WatchSaysWhenZooKeeperIsAway(t *testing.T) {
	t.Parallel()
	zk := startZooKeeper(t)
	proxy := testproxy.New(t, zk.Addr())
	reg := "zookeeper://" + proxy.Addr() + "?session.timeout=20s"
	serveWith(t, "127.0.0.1:0", "zookeeper://"+zk.Addr())
	js := startWatch(t, reg, "demo.Echo", "--json")
	txt := startWatch(t, reg, "demo.Echo")
	js.waitLine(t, regexp.MustCompile(`"event":"count".*"providers":1`), time.Time{}, 30*time.Second)
	txt.waitLine(t, regexp.MustCompile(`demo\.Echo: 1 provider$`), time.Time{}, 30*time.Second)

	cut := time.Now()
	proxy.Refuse(true)
	proxy.Cut()
	js.waitLine(t, regexp.MustCompile(`"event":"registry".*"state":"disconnected".*"message":"registry disconnected.*keeping the last list of 1 provider.*"providers":1`), cut, 30*time.Second)
	txt.waitLine(t, regexp.MustCompile(`! registry disconnected.*: keeping the last list of 1 provider until ZooKeeper is back`), cut, 30*time.Second)

	back := time.Now()
	proxy.Refuse(false)
	js.waitLine(t, regexp.MustCompile(`"event":"registry".*"state":"connected".*"message":"registry connected again`), back, 30*time.Second)
	txt.waitLine(t, regexp.MustCompile(`! registry connected again.*: the list is current$`), back, 30*time.Second)
	if js.has(regexp.MustCompile(`"new_session":true`)) {
		t.Errorf("a 20 s session back within seconds was reported as a new session:\n%s", js.text())
	}
}

package zookeeper_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const msgRemovedEarlier = "removed an earlier process's entry at this provider's address"

// TestDU_EarlierProcessEntryRemovedAtInfo (tester102 #3): a provider
// restarted after a kill -9 finds its predecessor's entry (another
// session, not expired yet, an earlier timestamp, a pid no longer
// running) at its address: it removes it with an INFO line saying so.
// An entry of another session with an earlier timestamp whose pid runs
// (another live process publishing the address) is still a WARN.
func TestDU_EarlierProcessEntryRemovedAtInfo(t *testing.T) {
	const root = "duearlier"
	raw := rawClient(t)
	other := rawClient(t)
	dir := "/" + root + "/demo.Echo/providers"
	for _, p := range []string{"/" + root, "/" + root + "/demo.Echo", dir} {
		_, _ = raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// provider's own timestamp is 1700000000000
	dead := nodeName(provider(29003, fmt.Sprintf("&pid=%d", gone.Process.Pid)).With("timestamp", "1699999990000"))
	live := nodeName(provider(29004, fmt.Sprintf("&pid=%d", os.Getpid())).With("timestamp", "1699999990000"))
	for _, n := range []string{dead, live} {
		if _, err := other.Create(dir+"/"+n, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	plog := new(lineLog)
	p := buildLogged(t, server.URL("root="+root), plog)
	for _, port := range []int{29003, 29004} {
		if err := p.Register(ctx(t), provider(port, "&pid=1")); err != nil {
			t.Fatal(err)
		}
	}
	plog.waitFor(t, 5*time.Second, msgRemovedEarlier)
	plog.waitFor(t, 5*time.Second, msgRemovedForeign)
	time.Sleep(200 * time.Millisecond)
	info, warn := plog.find(msgRemovedEarlier), plog.find(msgRemovedForeign)
	if len(info) != 1 || info[0].level.String() != "INFO" || info[0].attrs["path"] != dir+"/"+dead {
		t.Errorf("earlier-process lines %v, want one INFO for %s", info, dead)
	} else {
		t.Logf("%s", info[0].msg)
	}
	if len(warn) != 1 || warn[0].level.String() != "WARN" || warn[0].attrs["path"] != dir+"/"+live {
		t.Errorf("foreign lines %v, want one WARN for %s (its pid runs)", warn, live)
	}
}

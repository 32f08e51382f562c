package zookeeper_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// tester90 #3a: after ZooKeeper was wiped and restarted under a
// provider, its "opening a new session" Warn gave old_session=0. It names
// the session the provider had: the owner of its ephemeral entry before
// the wipe.
func TestBY_RedialNamesTheOldSession(t *testing.T) {
	const q = "root=by3a&session.timeout=2s&connect.timeout=1s"
	p, plog := registeredProvider(t, server.URL(q))
	raw := rawClient(t)
	ch, _, err := raw.Children("/by3a/demo.Echo/providers")
	if err != nil || len(ch) != 1 {
		t.Fatalf("provider entry: %v %v", ch, err)
	}
	_, stat, err := raw.Get("/by3a/demo.Echo/providers/" + ch[0])
	if err != nil || stat.EphemeralOwner == 0 {
		t.Fatalf("entry's owner: %+v %v", stat, err)
	}
	want := fmt.Sprintf("0x%x", stat.EphemeralOwner)
	raw.Close()

	wipeZooKeeper(t, p)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got []string
		plog.mu.Lock()
		for _, l := range plog.lines {
			if strings.Contains(l.msg, "opening a new session") {
				got = append(got, l.attrs["old_session"])
			}
		}
		plog.mu.Unlock()
		if len(got) > 0 {
			for _, s := range got {
				if s != want {
					t.Errorf("old_session=%s; want %s, the session whose entry the provider had", s, want)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"opening a new session\" Warn within 20s; lines: %+v", plog.lines)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package zookeeper_test

import (
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/zktest"
)

// TestQuorumLossKeepsSession (f10, tester51 finding 6): a real 3-server
// ensemble loses its quorum (two servers stopped) for three times the
// session timeout. The server left closes every session request at the
// handshake, as a server restarted with empty data does; c52e6c5 took that
// for a refused session and opened a new one after 6-8 s, and 942a23f
// still gave the session up session.timeout after the last contact, with
// "session expired ... consumers will drop this provider", an expiry
// counted and every entry re-created when the quorum came back. Nobody
// can expire a session while the ensemble has no quorum (its next leader
// resets every session's timeout), so the registry now keeps it: Info
// "not serving" once, no Warn of a refused or expired session, nothing
// counted, Health nil, and the same session owns the entry afterwards.
func TestQuorumLossKeepsSession(t *testing.T) {
	ens, err := zktest.StartEnsemble(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ens.Close)
	const timeout = 4 * time.Second
	p, plog := registeredProvider(t, "zookeeper://"+ens.Addrs()+"?root=f10q&session.timeout=4s&connect.timeout=2s")
	health := func() error { return p.(interface{ Health() error }).Health() }
	raw, _, err := zk.Connect([]string{ens.Servers[0].Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	owner := func() int64 { t.Helper(); return entryOwner(t, raw, "/f10q/demo.Echo/providers") }
	before := owner()
	expiries := counters.Registry.SessionExpiries.Load()

	ens.Servers[1].Stop()
	ens.Servers[2].Stop() // no quorum: server 1 of 3 serves nobody
	cut := time.Now()
	l := plog.waitFor(t, 3*timeout, msgNotServing)
	t.Logf("%v after the quorum loss: %s %v", l.at.Sub(cut).Round(time.Millisecond), l.msg, l.attrs)
	for time.Since(cut) < 3*timeout {
		if err := health(); err != nil {
			t.Fatalf("%v into a quorum loss: Health %v; want nil (the entries are still in ZooKeeper)", time.Since(cut).Round(time.Millisecond), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, msg := range []string{msgRefuses, "no session for session.timeout", "session expired"} {
		if w := plog.find(msg); len(w) != 0 {
			t.Errorf("during a quorum loss of %v (session %v): %+v", time.Since(cut).Round(time.Millisecond), timeout, w)
		}
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
		t.Errorf("SessionExpiries counted %d during a quorum loss, want 0", n)
	}

	for _, s := range ens.Servers[1:] {
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	back := time.Now()
	plog.waitFor(t, 30*time.Second, "connected again")
	t.Logf("connected again %v after the quorum was back", time.Since(back).Round(time.Millisecond))
	if after := owner(); after != before {
		t.Errorf("entry owned by session 0x%x after the quorum loss, 0x%x before: want the session kept", after, before)
	}
	time.Sleep(timeout) // past when a given-up session would have been replaced
	if w := plog.find("new session"); len(w) != 0 {
		t.Errorf("a new session after the quorum came back: %+v", w)
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
		t.Errorf("SessionExpiries counted %d, want 0", n)
	}
	if err := health(); err != nil {
		t.Errorf("Health after the quorum came back: %v", err)
	}
}

// entryOwner returns the session owning the one entry under providers
// (a providers node's path), failing t when there is not exactly one.
func entryOwner(t *testing.T, c *zk.Conn, providers string) int64 {
	t.Helper()
	ch, _, err := c.Children(providers)
	if err != nil || len(ch) != 1 {
		t.Fatalf("provider entries: %v, %v; want one", ch, err)
	}
	_, st, err := c.Get(path.Join(providers, ch[0]))
	if err != nil {
		t.Fatal(err)
	}
	return st.EphemeralOwner
}

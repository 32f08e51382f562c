package zookeeper_test

import (
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
)

const (
	msgRefuses    = "ZooKeeper refuses this session"
	msgNotServing = "ZooKeeper closes this session's requests at the handshake"
)

// TestProxyToNothingIsNotARefusedSession (f5): a TCP proxy in front of a
// ZooKeeper that is down accepts every connection and closes it at once,
// as a ZooKeeper restarted with empty data closes a session it refuses
// (and as one loading its data or without a quorum does). The registry
// opened a new session after two such closes, with a "refuses this
// session" Warn and a session expiry counted, although the session was
// alive. Now a new session request to the same address tells them apart:
// closed too, so the registry says at Info, once, that ZooKeeper is not
// serving, keeps its session (no Warn, nothing counted) and, when the
// proxy forwards again within session.timeout, goes on with it, its entry
// still owned by the same session. (The wiped server, which grants the
// new session request, is TestWipedServerRefusalOpensNewSessionAtOnce.)
//
// The whole outage must stay within session.timeout, or the server expires
// the session (rightly): 15 s, where 4 s was outlasted by the wait for the
// Info line plus the 1.5 s of further refusals on a loaded machine.
func TestProxyToNothingIsNotARefusedSession(t *testing.T) {
	const session = 15 * time.Second
	px := testproxy.New(t, server.Addr())
	p, plog := registeredProvider(t, "zookeeper://"+px.Addr()+"?root=f5np&session.timeout="+session.String()+"&connect.timeout=1s")
	raw := rawClient(t)
	owner := func() int64 { t.Helper(); return entryOwner(t, raw, "/f5np/demo.Echo/providers") }
	before := owner()
	expiries := counters.Registry.SessionExpiries.Load()

	unreachable(px) // accepts and closes: a proxy to nothing
	cut := time.Now()
	l := plog.waitFor(t, 8*time.Second, msgNotServing) // two closed connections and a probe
	t.Logf("%v after the cut: %s %v", l.at.Sub(cut).Round(time.Millisecond), l.msg, l.attrs)
	if l.level.String() != "INFO" || l.attrs["server"] != px.Addr() || l.attrs["refused"] != "2" {
		t.Errorf("not-serving line: level %v server %q refused %q; want INFO, %s, 2", l.level, l.attrs["server"], l.attrs["refused"], px.Addr())
	}
	time.Sleep(1500 * time.Millisecond) // more rounds of refusals, well within the session
	if w := plog.find(msgRefuses); len(w) != 0 {
		t.Errorf("a proxy to nothing was taken for a refused session: %+v", w)
	}
	if n := len(plog.find(msgNotServing)); n != 1 {
		t.Errorf("%d not-serving lines in one outage, want 1", n)
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
		t.Errorf("SessionExpiries counted %d during a %v outage of a %v session, want 0", n, time.Since(cut).Round(time.Millisecond), session)
	}

	px.Refuse(false)
	deadline := time.Now().Add(10 * time.Second)
	for p.(interface{ Health() error }).Health() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no session 10s after the proxy forwards again: %v", p.(interface{ Health() error }).Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := owner(); after != before {
		t.Errorf("entry owned by session 0x%x after the outage, 0x%x before: want the same session kept", after, before)
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
		t.Errorf("SessionExpiries counted %d, want 0", n)
	}
}

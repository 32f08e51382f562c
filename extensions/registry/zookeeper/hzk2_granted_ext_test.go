package zookeeper_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
)

// TestHZK2_GrantedSessionTimeout: a registry judges its session's expiry
// by the session timeout ZooKeeper granted, not the one it asked for.
// The server clamps a requested timeout to its [2, 20] x tickTime; with
// tickTime=2s, session.timeout=1s is granted 4s. The registry reports the
// granted value (SessionTimeout, one Info line), and a 2 s partition,
// healed, leaves the session alone: the server keeps a session it has
// heard from within 4 s, so no "session expired" Warn, no Health error,
// no expiry counted, no new session, the entry still owned by the first
// session. Judging by the 1 s asked, the registry declared the session
// expired as soon as it noticed the dead connection (go-zookeeper's
// receive timeout, two thirds of the granted 4 s, after the last contact)
// and opened a new session although ZooKeeper had kept the old one.
func TestHZK2_GrantedSessionTimeout(t *testing.T) {
	const (
		tick    = 2 * time.Second
		asked   = time.Second
		granted = 2 * tick // ZooKeeper's default minSessionTimeout
	)
	zs, err := zktest.StartTick(tick)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zs.Close)
	hole := testproxy.New(t, zs.Addr()) // the path that dies
	px := testproxy.New(t, hole.Addr()) // what the provider dials
	var plog lineLog
	p, err := zookeeper.Builder{Logger: slog.New(&plog)}.Build(spi.MustParse("zookeeper://" + px.Addr() + "?root=hzk2&session.timeout=1s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	reg := p.(*zookeeper.Registry)
	if got := reg.SessionTimeout(); got != granted {
		t.Errorf("SessionTimeout() = %v after asking %v of a server with tickTime %v, want %v (its minSessionTimeout)", got, asked, tick, granted)
	}
	const msgGranted = "ZooKeeper granted a session timeout of "
	info := plog.waitFor(t, time.Second, msgGranted)
	if want := msgGranted + "4s (asked 1s; the server bounds it to 2-20 x its tickTime)"; info.msg != want || info.level != slog.LevelInfo ||
		info.attrs["granted"] != "4s" || info.attrs["asked"] != "1s" {
		t.Errorf("granted line: %v %q %v, want INFO %q granted=4s asked=1s", info.level, info.msg, info.attrs, want)
	}

	raw, _, err := zk.Connect([]string{zs.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	node := "/hzk2/demo.Echo/providers/" + nodeName(provider(1, ""))
	_, st, err := raw.Get(node)
	if err != nil {
		t.Fatalf("entry %s: %v", node, err)
	}
	owner := st.EphemeralOwner

	time.Sleep(granted / 2) // a few pings (every granted/3): the partition falls anywhere between two
	expiries := counters.Registry.SessionExpiries.Load()
	start := time.Now()
	hole.BlackHole()
	time.Sleep(2 * time.Second)
	px.SetTarget(zs.Addr()) // heal: the next connection reaches the server
	back := plog.waitFor(t, 2*granted, "connected again")
	lost := plog.waitFor(t, time.Second, "connection lost")
	t.Logf("after the partition: connection lost noticed %v (last_heard_ago=%s), connected again %v (unheard_for=%s, lost_for=%s)",
		since(start, lost.at), lost.attrs["last_heard_ago"], since(start, back.at), back.attrs["unheard_for"], back.attrs["lost_for"])
	// The recovery line says how long ZooKeeper was not heard: from the
	// last contact before the partition (a ping answer, up to a ping
	// interval, granted/3, before it) to the new connection (f5).
	if d, err := time.ParseDuration(back.attrs["unheard_for"]); err != nil || d < 2*time.Second || d > since(start, back.at)+granted/3+time.Second {
		t.Errorf("connected again: unheard_for=%q; want the outage, 2s to %v", back.attrs["unheard_for"], since(start, back.at)+granted/3+time.Second)
	}

	// Past when the old session would have expired had the server not
	// heard from it again (last contact + granted, rounded up to a tick).
	time.Sleep(time.Until(start.Add(granted + tick + time.Second)))
	for _, msg := range []string{msgEntriesGone, "no session for session.timeout", "new session"} {
		if l := plog.find(msg); len(l) != 0 {
			t.Errorf("a 2 s partition with a granted session timeout of %v: %q %v after the partition (%v)", granted, msg, since(start, l[0].at), l[0].attrs)
		}
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
		t.Errorf("SessionExpiries counted %d, want 0: ZooKeeper kept the session", n)
	}
	if err := reg.Health(); err != nil {
		t.Errorf("Health: %v", err)
	}
	if _, st, err := raw.Get(node); err != nil || st.EphemeralOwner != owner {
		t.Errorf("entry after the heal: err %v, owner %#x, want the first session %#x", err, st.EphemeralOwner, owner)
	}
	if kids, _, err := raw.Children("/hzk2/demo.Echo/providers"); err != nil || len(kids) != 1 {
		t.Errorf("providers after the heal: %v %v, want the one entry", kids, err)
	}

	// The other way: 60 s asked of a server whose maxSessionTimeout is 40 s
	// is granted 40 s, which the warnings then use.
	var llog lineLog
	long, err := zookeeper.Builder{Logger: slog.New(&llog)}.Build(spi.MustParse(zs.URL("root=hzk2&session.timeout=60s")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = long.Close() })
	if _, err := long.Services(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got, want := long.(*zookeeper.Registry).SessionTimeout(), 20*tick; got != want {
		t.Errorf("SessionTimeout() = %v after asking 60s, want %v (the server's maxSessionTimeout)", got, want)
	}
	if l := llog.waitFor(t, time.Second, msgGranted); l.attrs["granted"] != "40s" || l.attrs["asked"] != "1m0s" {
		t.Errorf("granted line after asking 60s: %q %v", l.msg, l.attrs)
	}
}

package zookeeper_test

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
)

// TestT89_1_RestartDataKeptKeepsSession (tester89 #1): ZooKeeper
// stopped and started again with its data kept. A ZooKeeper that is down
// expires no session, and on restart its session tracker restores every
// session of its data with a fresh timeout, so the provider's session
// is resumed and its entry stays, owned by the same session, whatever the
// time since the provider last heard ZooKeeper. The registry judged that
// time alone (the last ping, up to a third of session.timeout before the
// stop, plus the outage plus the server's start) and, past
// session.timeout, said "session expired" ("ZooKeeper refuses this
// session ... (it expired the session ...)" when the server, still
// starting, closed a handshake) and re-created its entries under a new
// session. Two outages: one shorter than session.timeout (the issue's,
// which the time since the last ping pushes past it) and one longer
// (nobody expires a session while ZooKeeper is down: the registry says
// so at Info, once).
func TestT89_1_RestartDataKeptKeepsSession(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session time.Duration
		outage  time.Duration
	}{
		{"within session.timeout", 4 * time.Second, 3 * time.Second},
		{"longer than session.timeout", 3 * time.Second, 6 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := "t89k" + strings.ReplaceAll(tc.outage.String(), ".", "")
			q := "root=" + root + "&session.timeout=" + tc.session.String() + "&connect.timeout=1s"
			_, plog := registeredProvider(t, server.URL(q))
			c := build(t, server.URL(q))
			rec := subscribe(t, c, consumer)
			rec.wait(t, 10*time.Second, 1)
			raw := rawClient(t)
			path := "/" + root + "/demo.Echo/providers/" + nodeName(provider(1, ""))
			_, before, err := raw.Get(path)
			if err != nil {
				t.Fatal(err)
			}
			raw.Close()
			expiries := counters.Registry.SessionExpiries.Load()

			server.Stop() // SIGKILL: the data directory stays
			stopped := time.Now()
			t.Cleanup(func() { _ = server.Restart() })
			time.Sleep(tc.outage)
			if err := server.Restart(); err != nil {
				t.Fatal(err)
			}
			t.Logf("ZooKeeper down %v (stop to serving again), session.timeout %v", time.Since(stopped).Round(time.Millisecond), tc.session)
			back := plog.waitFor(t, 15*time.Second, "connected again")
			t.Logf("connected again: unheard_for=%s lost_for=%s", back.attrs["unheard_for"], back.attrs["lost_for"])

			raw = rawClient(t)
			_, after, err := raw.Get(path)
			if err != nil {
				t.Fatalf("the provider's entry after the restart: %v", err)
			}
			if after.EphemeralOwner != before.EphemeralOwner {
				t.Errorf("entry owned by session 0x%x after the restart, 0x%x before: want the same session, resumed", after.EphemeralOwner, before.EphemeralOwner)
			}
			time.Sleep(tc.session + time.Second) // a session the server did not resume would expire meanwhile
			if ch, _, err := raw.Children("/" + root + "/demo.Echo/providers"); err != nil || len(ch) != 1 {
				t.Errorf("entries %v, %v a session.timeout after the restart; want the provider's", ch, err)
			}
			if l, _ := rec.last(); !hasPorts(l, []int{1}) {
				t.Errorf("the consumer lists %v, want the provider", l)
			}
			for _, msg := range []string{msgRefuses, "no session for session.timeout", msgEntriesGone, "new session", msgEntriesBack} {
				if l := plog.find(msg); len(l) > 0 {
					t.Errorf("the provider logged %q (%v) for a restart with the data kept: the server resumed the session", l[0].msg, l[0].attrs)
				}
			}
			if n := counters.Registry.SessionExpiries.Load() - expiries; n != 0 {
				t.Errorf("%d session expiries counted, want 0", n)
			}
			if held := plog.find("ZooKeeper is down"); tc.outage > tc.session && len(held) != 1 {
				t.Errorf("%d Info lines that the session is kept while ZooKeeper is down, want 1", len(held))
			}
		})
	}
}

package zookeeper_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestWipedServerRefusalOpensNewSessionAtOnce (tester46 finding 4): a
// ZooKeeper restarted with empty data refuses the provider's session
// (its client has seen a higher zxid than the server's: the server closes
// the connection at the handshake). The provider opens a new session
// once every server has refused it twice, about a second after the
// server is back, instead of waiting out session.timeout since its last
// contact (20 s here: its entry came back 13-28 s after the wipe with the
// default 30 s); the consumer's registry does the same and lists a
// provider registered after the wipe.
func TestWipedServerRefusalOpensNewSessionAtOnce(t *testing.T) {
	const q = "root=refw&session.timeout=20s&connect.timeout=1s"
	p, plog := registeredProvider(t, server.URL(q))
	c := build(t, server.URL(q))
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)

	restarted := wipeZooKeeper(t, p, c)

	raw := rawClient(t)
	for {
		ch, _, err := raw.Children("/refw/demo.Echo/providers")
		if err == nil && len(ch) == 1 {
			break
		}
		if time.Since(restarted) > 30*time.Second {
			t.Fatalf("provider entry not back within %v of the restart: %v %v", time.Since(restarted), ch, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	back := time.Since(restarted)
	t.Logf("provider entry back %v after the wiped ZooKeeper was serving again (session.timeout 20s)", back.Round(10*time.Millisecond))
	if back > 8*time.Second {
		t.Errorf("provider entry back %v after the restart, want within 8s (a second or two: two refusals), not session.timeout (20s) after the last contact", back.Round(10*time.Millisecond))
	}
	plog.waitFor(t, 5*time.Second, msgEntriesBack)
	checkRecoveryOrder(t, plog)

	p3 := build(t, server.URL(q))
	if err := p3.Register(ctx(t), provider(2, "")); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 10*time.Second, 1, 2)
	t.Logf("consumer lists the provider registered after the wipe %v after the restart", time.Since(restarted).Round(10*time.Millisecond))
}

// checkRecoveryOrder checks the provider's log of one session expiry
// (tester72 #6): the incident's start, "session expired: provider
// entries ... are not in ZooKeeper", at Warn, comes before the lines that
// mark its end, "new session; re-creating entries" and "... are in
// ZooKeeper again", both at Info (they came Warn, Warn in the other
// order, then Info: a "page on Warn" rule fired on the recovery).
func checkRecoveryOrder(t *testing.T, plog *lineLog) {
	t.Helper()
	plog.mu.Lock()
	defer plog.mu.Unlock()
	at := map[string]int{}
	for i, l := range plog.lines {
		for _, m := range []string{msgEntriesGone, "new session; re-creating entries", msgEntriesBack} {
			if _, seen := at[m]; !seen && strings.HasPrefix(l.msg, m) {
				at[m] = i
				want := slog.LevelInfo
				if m == msgEntriesGone {
					want = slog.LevelWarn
				}
				if l.level != want {
					t.Errorf("%q logged at %v, want %v", l.msg, l.level, want)
				}
			}
		}
	}
	gone, okG := at[msgEntriesGone]
	fresh, okN := at["new session; re-creating entries"]
	back, okB := at[msgEntriesBack]
	if !okG || !okN || !okB || gone > fresh || fresh > back {
		var msgs []string
		for _, l := range plog.lines {
			msgs = append(msgs, l.level.String()+" "+l.msg)
		}
		t.Errorf("want entries-gone (Warn), then new session (Info), then entries back (Info); lines:\n%s", strings.Join(msgs, "\n"))
	}
}

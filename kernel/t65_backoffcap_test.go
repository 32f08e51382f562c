package kernel

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
)

// tester65 #12 (scenario H3 "by itself"): the background redial backoff
// doubled to 30 s, so a provider back after a long outage waited up to 30
// s to be redialed when no call asked. It now doubles to
// ReconnectBackoffCap (5 s). With reconnect.backoff=2s the delays are 2 s,
// 4 s, then 5 s (8 s before); the provider back after the third failed
// redial is reconnected by the background redial alone, no call made,
// within the cap and its jitter.
func TestT65_12_ReconnectBackoffCapped(t *testing.T) {
	_, e := provider(t)
	px := testproxy.New(t, e.URL().Address())
	var buf logbuf.Buffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/demo.Echo?reconnect.backoff=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	px.Down()
	wait := func(within time.Duration, parts ...string) string {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			for l := range strings.SplitSeq(buf.String(), "\n") {
				ok := true
				for _, p := range parts {
					ok = ok && strings.Contains(l, p)
				}
				if ok {
					return l
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no log line with %q within %v:\n%s", parts, within, buf.String())
		return ""
	}
	// attempts at about 0, 2 and 6 s (jitter ±20 %)
	third := wait(15*time.Second, `msg="kernel: cannot reconnect to provider"`, "attempt=3 ")
	if !strings.Contains(third, "retry_in=5s") {
		t.Fatalf("third failed redial: %s\nwant retry_in=5s (doubling capped at ReconnectBackoffCap)", third)
	}
	px.Up()
	back := time.Now()
	line := wait(10*time.Second, `msg="kernel: reconnected to provider"`)
	took := time.Since(back)
	t.Logf("reconnected %v after the provider was back: %s", took.Round(time.Millisecond), line)
	if !regexp.MustCompile(`asked_by_a_call=false asked_by_registry_entry=false`).MatchString(line) {
		t.Errorf("reconnect was asked for: %s; want the background redial alone", line)
	}
	if took > 7*time.Second { // 5 s +20 % jitter, and slack for a loaded machine
		t.Errorf("reconnected %v after the provider was back; want within the 5 s cap (6 s with jitter)", took)
	}
}

package kernel

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// daProvider is namedProvider exporting with dispatcher d, its Who slow
// (5 s) when slow.
func daProvider(t *testing.T, name, d string, slow bool) string {
	t.Helper()
	s := &namedService{name: name}
	s.slow.Store(slow)
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), s, spi.MustParse("airnode://127.0.0.1:0/t12.Who?warmup=0&dispatcher="+d))
	if err != nil {
		t.Fatal(err)
	}
	return e.URL().Address()
}

// TestDA_HungProviderClosedLongBeforeItsCallsTimeOut (fix-da, fix-db):
// with a 10 s call timeout, a provider that hangs (its connection up,
// nothing answered: kill -STOP) while 8 callers use it and another one is
// found by the quiet watch, not by the first timeout: its calls wait with
// nothing read for exchange.QuietBound(10s) (5 s), a ping goes unanswered
// for 1 s, and the liveness check closes the connection, not before
// those 6 s and within them + 2.5 s of slack (the watch's 0.5 s look, and
// a loaded machine's delays: 7.02 s was seen at load 15), still short of
// the 10 s timeout;
// after that no call is sent to it, and the calls go to the other
// provider.
func TestDA_HungProviderClosedLongBeforeItsCallsTimeOut(t *testing.T) {
	_, goodAddr := namedProvider(t, "good")
	_, badAddr := namedProvider(t, "bad")
	px := testproxy.New(t, badAddr)
	c, logs, picks := pickingConsumer(t)
	bad := px.Addr()
	r := refer(t, c, "airnode://"+goodAddr+","+bad+
		"/t12.Who?timeout=10s&loadbalance=t86.picks&connect.timeout=500ms&reconnect.backoff=100ms")
	eventually(t, "both providers connected", func() bool { return len(r.Providers()) == 2 })
	l := startCalls(t, r, 8)
	time.Sleep(300 * time.Millisecond)
	paused := time.Now()
	px.Pause(true)
	least := exchange.QuietBound(10*time.Second) + time.Second // the bound, then the ping's wait
	bound := least + 2500*time.Millisecond
	if !waitFor(bound+5*time.Second, func() bool { return len(livenessCloses(logs, bad)) > 0 }) {
		t.Fatalf("the liveness check did not close the hung provider's connection within %v", bound+5*time.Second)
	}
	closed := livenessCloses(logs, bad)[0]
	took := closed.at.Sub(paused)
	t.Logf("closed %v after the hang: %s", took.Round(time.Millisecond), closed.attrs["reason"])
	if took > bound || took < least-200*time.Millisecond {
		t.Errorf("closed %v after the hang, want between %v (quiet bound 5 s, the ping's 1 s) and %v (2.5 s of slack), not at the 10 s timeout", took, least, bound)
	}
	if !strings.Contains(closed.attrs["reason"], "waiting with nothing read for") {
		t.Errorf("reason %q, want the quiet watch's (calls waiting with nothing read)", closed.attrs["reason"])
	}
	l.snapshot()
	from := time.Now().Add(300 * time.Millisecond)
	time.Sleep(1300 * time.Millisecond)
	to := time.Now()
	if n := picks.between(bad, from, to); n != 0 {
		t.Errorf("%d calls sent to the hung provider in the 1 s from 300 ms after the close, want 0", n)
	}
	ok, failed := l.snapshot()
	if ok["good"] == 0 || ok["bad"] != 0 {
		t.Errorf("after the close: answered %v, want calls answered by good only", ok)
	}
	if failed[spi.StatusServerTimeout] != 0 {
		t.Errorf("failures %v: no call should have waited out its 10 s timeout", failed)
	}
	l.end()
}

// TestDA_SlowCallsKeepTheirChannel (fix-da, fix-db): calls that run
// 5 s wait with nothing read for as long. With a 10 s timeout that is
// within their exchange.QuietBound (5 s): no check need start. With a
// 6 s one it is past it (3 s): the quiet watch pings, and the provider
// answers on its reader while they run (dispatcher adaptive and all), or
// says in its hello that it runs them on its reader (direct), where no
// such ping is sent. Either way the channel stays and every call
// succeeds.
func TestDA_SlowCallsKeepTheirChannel(t *testing.T) {
	for _, tc := range []struct {
		dispatcher string
		timeout    string
		callers    int  // direct runs one call at a time per connection: one caller keeps each under its timeout
		pinged     bool // the quiet watch's ping is sent and answered
	}{
		{"adaptive", "10s", 8, false}, {"all", "10s", 8, false}, {"direct", "10s", 1, false},
		{"adaptive", "6s", 8, true}, {"all", "6s", 8, true}, {"direct", "6s", 1, false},
	} {
		t.Run(tc.dispatcher+"/"+tc.timeout, func(t *testing.T) {
			t.Parallel()
			addr := daProvider(t, "slow", tc.dispatcher, true)
			c, logs := outlierConsumer(t)
			r := refer(t, c, "airnode://"+addr+"/t12.Who?timeout="+tc.timeout)
			eventually(t, "the provider connected", func() bool { return len(r.Providers()) == 1 })
			pings := counters.Heartbeat.PingsAnswered.Load()
			l := startCalls(t, r, tc.callers)
			time.Sleep(7 * time.Second) // one round of 5 s calls, and 2 s into the next
			l.end()                     // waits for the second round
			ok, failed := l.snapshot()
			if ok["slow"] < 2*tc.callers || len(failed) != 0 {
				t.Errorf("answered %v, failed %v: want %d calls answered, none failed", ok, failed, 2*tc.callers)
			}
			if closes := logs.find("kernel: channel closed"); len(closes) != 0 {
				t.Errorf("channel closed: %v", closes[0].attrs)
			}
			if tc.pinged && counters.Heartbeat.PingsAnswered.Load() == pings {
				t.Errorf("no ping answered during the slow calls: the quiet watch did not look")
			}
		})
	}
}

package kernel

import (
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// t86PickLB ("t86.picks") picks at random, as the default balancer, and
// notes each pick: the consumer-side count of calls sent to a provider.
type t86PickLB struct{ picks *pickLog }

func (b t86PickLB) Name() string                           { return "t86.picks" }
func (b t86PickLB) Build(spi.URL) (spi.LoadBalance, error) { return b, nil }
func (b t86PickLB) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	inv := invokers[rand.IntN(len(invokers))]
	b.picks.add(inv.URL().Address())
	return inv
}

// pickLog is when each provider address was picked.
type pickLog struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func (p *pickLog) add(addr string) {
	p.mu.Lock()
	p.at[addr] = append(p.at[addr], time.Now())
	p.mu.Unlock()
}

// between counts addr's picks in [from, to).
func (p *pickLog) between(addr string, from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.at[addr] {
		if !a.Before(from) && a.Before(to) {
			n++
		}
	}
	return n
}

const msgHeld = "kernel: provider's ejection ended; still ejected: its liveness ping sent "

// t86Setup: a good provider and a bad one behind a proxy that can hang
// it (Pause: kill -STOP), a consumer calling both with 8 callers,
// timeout 2.5s, outlier.ejection 1s, picks counted; the bad one is hung
// and ejected (its calls time out, the first timeout's liveness ping
// waits 2.5 s, the ejection 1 s). The timeout is under
// exchange.QuietFloor, so the first timeout's check comes before the
// quiet watch would ping (3 s of silence), and that check's ping is the
// one the ejection is held for. It returns the proxy, the consumer's
// records, the picks and the ejection line.
func t86Setup(t *testing.T) (*testproxy.Proxy, recordLog, *pickLog, logRecord) {
	_, goodAddr := namedProvider(t, "good")
	_, badAddr := namedProvider(t, "bad")
	px := testproxy.New(t, badAddr)
	c, logs, picks := pickingConsumer(t)
	r := refer(t, c, "airnode://"+goodAddr+","+px.Addr()+
		"/t12.Who?timeout=2500ms&outlier.ejection=1s&loadbalance=t86.picks&connect.timeout=500ms&reconnect.backoff=100ms")
	eventually(t, "both providers connected", func() bool { return len(r.Providers()) == 2 })
	startCalls(t, r, 8)
	time.Sleep(200 * time.Millisecond)
	px.Pause(true)
	if !waitFor(15*time.Second, func() bool { return len(logs.find(msgEjected)) > 0 }) {
		t.Fatal("the hung provider was not ejected within 15 s")
	}
	return px, logs, picks, logs.find(msgEjected)[0]
}

// pickingConsumer is a consumer node logging into a recordLog, with the
// t86.picks balancer noting its picks.
func pickingConsumer(t *testing.T) (*Node, recordLog, *pickLog) {
	picks := &pickLog{at: map[string][]time.Time{}}
	cat := testCatalogs(t)
	if err := cat.LoadBalance.Register(t86PickLB{picks}, "t86"); err != nil {
		t.Fatal(err)
	}
	logs := newRecordLog()
	c := NewNode(cat, WithLogger(slog.New(logs)))
	t.Cleanup(func() { _ = c.Close() })
	return c, logs, picks
}

// livenessCloses returns the consumer's "channel closed" lines for addr
// whose reason is the liveness check's.
func livenessCloses(logs recordLog, addr string) []logRecord {
	var out []logRecord
	for _, r := range logs.find("kernel: channel closed") {
		if r.attrs["provider"] == addr && strings.HasPrefix(r.attrs["reason"], "liveness check:") {
			out = append(out, r)
		}
	}
	return out
}

// TestT86_HungProviderStaysEjectedWhileItsPingIsUnanswered (tester86
// #1): a hung provider (its connection up, nothing answered) is ejected
// for its timeouts (timeout 2.5s) for 1 s, while the liveness ping its
// first timeout sent waits 2.5 s. The ejection's end does not put it back
// in use: one line says it ended and the provider is still ejected, its
// ping unanswered; no call is sent to it until the check closes the
// connection, nor after (reconnecting, its first ping unanswered), and
// no "back in use" is logged while it hangs. Before, it was back in use
// at the ejection's end and took every caller's calls for 2 s, each
// failing CHANNEL_INACTIVE at the close.
func TestT86_HungProviderStaysEjectedWhileItsPingIsUnanswered(t *testing.T) {
	px, logs, picks, ej := t86Setup(t)
	bad := px.Addr()
	if ej.attrs["provider"] != bad || ej.attrs["ejection"] != "1s" {
		t.Fatalf("ejection line %v, want %s ejected for 1s", ej.attrs, bad)
	}
	if !waitFor(15*time.Second, func() bool { return len(livenessCloses(logs, bad)) > 0 }) {
		t.Fatal("the liveness check did not close the hung provider's connection within 15 s")
	}
	closed := livenessCloses(logs, bad)[0]
	if closed.at.Sub(ej.at) < 1500*time.Millisecond {
		t.Fatalf("the liveness check closed the connection %v after the ejection: want the 1 s ejection to end first (the ping waits 2.5 s)",
			closed.at.Sub(ej.at))
	}
	time.Sleep(time.Second) // and after the close, still hung
	quietFrom, quietTo := ej.at.Add(300*time.Millisecond), time.Now()
	if n := picks.between(bad, quietFrom, quietTo); n != 0 {
		t.Errorf("%d calls sent to the hung provider between 300 ms after its ejection and 1 s after the liveness check closed its connection (%v later), want 0",
			n, closed.at.Sub(ej.at).Round(time.Millisecond))
	}
	held := logs.find(msgHeld)
	if len(held) != 1 || held[0].attrs["provider"] != bad || held[0].attrs["ejected_for"] != "1s" ||
		held[0].at.Before(ej.at.Add(900*time.Millisecond)) || held[0].at.After(closed.at) {
		t.Errorf("hold lines %v, want one naming %s, ejected_for 1s, between the ejection's end and the close (%v)", held, bad, closed.at)
	} else {
		t.Logf("at the ejection's end: %q %v", held[0].msg, held[0].attrs)
	}
	if back := logs.find(msgBack); len(back) != 0 {
		t.Errorf("logged %v while the provider hangs", back)
	}
	// said by the check's close itself, just before the connection
	// manager's "channel closed" line
	if ended := logs.find(msgEjectionEndedNotConnected); len(ended) != 1 || ended[0].at.Before(held[0].at) ||
		ended[0].at.Sub(closed.at).Abs() > 500*time.Millisecond || ended[0].attrs["held_for_liveness_ping"] == "" {
		t.Errorf("%q lines %v, want one at the close (%v) with held_for_liveness_ping", msgEjectionEndedNotConnected, ended, closed.at)
	}

	// It wakes up: reconnected, back in use, picked again.
	woke := time.Now()
	px.Pause(false)
	if !waitFor(15*time.Second, func() bool { return picks.between(bad, woke, time.Now()) > 0 }) {
		t.Fatal("the provider was not picked within 15 s of waking up")
	}
	if back := logs.find(msgBack); len(back) != 1 || back[0].at.Before(woke) {
		t.Errorf("back lines %v, want one after it woke up", back)
	}
}

// TestT86_SlowProviderBackInUseWhenItsPingIsAnswered: a provider that
// was only slow — hung past the ejection's end, then answering before
// its liveness ping's wait ran out — is back in use as soon as the ping
// is answered, not at the ejection's end, and its connection stays.
func TestT86_SlowProviderBackInUseWhenItsPingIsAnswered(t *testing.T) {
	px, logs, picks, ej := t86Setup(t)
	bad := px.Addr()
	if !waitFor(5*time.Second, func() bool { return len(logs.find(msgHeld)) > 0 }) {
		t.Fatalf("no %q line within 5 s of the ejection; back lines %v", msgHeld, logs.find(msgBack))
	}
	held := logs.find(msgHeld)[0]
	if held.at.Sub(ej.at) > 2*time.Second {
		t.Fatalf("the hold was said %v after the ejection: too late to answer the ping within its 2.5 s", held.at.Sub(ej.at))
	}
	time.Sleep(200 * time.Millisecond)
	if n := picks.between(bad, ej.at.Add(300*time.Millisecond), time.Now()); n != 0 {
		t.Errorf("%d calls sent to the provider while its ping was unanswered", n)
	}
	answered := time.Now()
	px.Pause(false) // the ping's answer comes now
	if !waitFor(5*time.Second, func() bool { return len(logs.find(msgBack)) > 0 }) {
		t.Fatal("not back in use within 5 s of its ping's answer")
	}
	back := logs.find(msgBack)[0]
	if back.at.Before(answered) || back.at.Sub(answered) > time.Second {
		t.Errorf("back in use %v after the answer, want within 1 s and not before", back.at.Sub(answered))
	}
	if back.attrs["provider"] != bad || back.attrs["ejected_for"] != "1s" || back.attrs["held_for_liveness_ping"] == "" {
		t.Errorf("back line %v, want %s, ejected_for 1s and held_for_liveness_ping", back.attrs, bad)
	}
	t.Logf("back in use %v after the answer: %v", back.at.Sub(answered).Round(time.Millisecond), back.attrs)
	if !waitFor(5*time.Second, func() bool { return picks.between(bad, answered, time.Now()) > 0 }) {
		t.Error("not picked within 5 s of being back in use")
	}
	time.Sleep(3 * time.Second) // past the ping's wait
	if c := livenessCloses(logs, bad); len(c) != 0 {
		t.Errorf("the liveness check closed the connection of a provider that answered its ping: %v", c)
	}
	if len(logs.find(msgHeld)) != 1 {
		t.Errorf("hold lines %v, want one", logs.find(msgHeld))
	}
}

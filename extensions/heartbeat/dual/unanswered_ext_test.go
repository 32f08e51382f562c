package dual_test

import (
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/spi"
)

// A peer that stops answering (a SIGSTOPped process) gets one ping, not
// one per tick: the pings a paused peer reads at once when it resumes are
// what the provider's ping-flood guard took for a flood. Once something is
// read again (the late answer), pinging goes on.
func TestDualOneUnansweredPingAtATime(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=60ms&heartbeat.timeout=1h")
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		ch := hbtest.NewChannel(side, hbtest.Hung)
		stop := hb.Watch(ch)
		time.Sleep(800 * time.Millisecond) // 13 intervals: Dubbo's rule would have sent about 35 pings
		if n := ch.Pings(); n != 1 {
			t.Errorf("%s: %d pings to a silent peer in 13 intervals, want 1", side, n)
		}
		ch.SetPeer(hbtest.Answering)
		ch.Read() // the peer resumed: its answer to the queued ping arrives
		time.Sleep(500 * time.Millisecond)
		stop()
		if n := ch.Pings(); n < 3 {
			t.Errorf("%s: %d pings after the peer answered again, want pinging to go on (about 6 more)", side, n)
		}
		if r := ch.Reason(); r != "" {
			t.Errorf("%s: closed: %s", side, r)
		}
	}
}

// On a new connection the kernel's first ping (it carries the hello) is
// unanswered until the provider reads it: the consumer's watch adds no
// ping of its own meanwhile, however long the provider takes, so a
// provider paused while the consumer redials it reads one ping per
// connection.
func TestDualNoPingWhileTheFirstPingIsUnanswered(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=60ms&heartbeat.timeout=1h")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Answering)
	stop := hb.Watch(ch)
	ch.Write() // the kernel's first ping
	time.Sleep(500 * time.Millisecond)
	if n := ch.Pings(); n != 0 {
		t.Errorf("%d pings while the first ping was unanswered, want 0", n)
	}
	ch.Read() // its answer
	time.Sleep(500 * time.Millisecond)
	stop()
	if n := ch.Pings(); n < 3 {
		t.Errorf("%d pings after the first answer, want pinging every interval (about 6)", n)
	}
}

// A ping answered late — the peer resumed from a pause and answered the
// ping queued meanwhile — counts as written when its answer came: the
// watch does not ping again at once for write-idleness (the ping itself
// was written long before), which would reach the resumed provider right
// after the first and trip its ping-flood warning.
func TestDualLateAnswerIsNotFollowedAtOnce(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=300ms&heartbeat.timeout=1h")
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		ch := hbtest.NewChannel(side, hbtest.Hung)
		stop := hb.Watch(ch)
		deadline := time.Now().Add(10 * time.Second)
		for ch.Pings() < 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no ping within 10 s", side)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(700 * time.Millisecond) // the ping waits: more than two intervals since it was written
		ch.SetPeer(hbtest.Answering)
		ch.Read() // its late answer
		// A check runs every 100 ms; the next ping is due 300 ms after the
		// answer, not at the next check.
		time.Sleep(150 * time.Millisecond)
		n := ch.Pings()
		time.Sleep(600 * time.Millisecond)
		stop()
		if n != 1 {
			t.Errorf("%s: %d pings within 150 ms of the late answer, want none after the first", side, n-1)
		}
		if ch.Pings() < 2 {
			t.Errorf("%s: no ping in the 750 ms after the answer, want pinging to go on", side)
		}
	}
}

// A provider's watch starts on a goroutine of its own, after the channel's
// reader started: it can start after the consumer's first ping was read
// and before its answer was written. That answer is not a write awaiting
// an answer: the provider pings an idle consumer every interval as usual
// (it waited for an answer no consumer sends, never pinged, and closed a
// live idle consumer at its heartbeat.timeout: CI, load 20+).
func TestDualProviderPingsAfterAnsweringAPingReadBeforeItsWatch(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=60ms&heartbeat.timeout=1h")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Answering)
	ch.Read() // the consumer's first ping, read before the watch started
	time.Sleep(5 * time.Millisecond)
	stop := hb.Watch(ch)
	time.Sleep(5 * time.Millisecond)
	ch.Write() // its answer, written after
	time.Sleep(500 * time.Millisecond)
	stop()
	if n := ch.Pings(); n < 3 {
		t.Errorf("%d pings in 8 intervals to an idle consumer, want pinging every interval (about 6)", n)
	}
}

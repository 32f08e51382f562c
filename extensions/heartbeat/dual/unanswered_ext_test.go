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

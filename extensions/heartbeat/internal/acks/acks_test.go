package acks

import (
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/spi"
)

// counting is a fake channel whose spi.AckCounter a test sets.
type counting struct {
	*hbtest.Channel
	acked, unacked uint64
	ok             bool
}

func (c *counting) Acked() (uint64, uint64, bool) { return c.acked, c.unacked, c.ok }

func TestLook(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := &counting{Channel: hbtest.NewChannel(spi.Consumer, hbtest.Answering), ok: true}
	w := New(c)
	steps := []struct {
		acked, unacked uint64
		ok             bool
		now            int
		alive          time.Time // want
		backlog        bool      // want
	}{
		{0, 100, true, 0, time.Time{}, false},             // first look: nothing to compare
		{100, 0, true, 100, time.Time{}, false},           // acknowledged, but no backlog waited: small writes prove nothing
		{100, Backlog, true, 200, time.Time{}, true},      // a backlog now
		{100 + 1, Backlog - 1, true, 300, at(200), false}, // more acknowledged of it: alive at the previous look
		{200, Backlog, true, 400, at(200), true},          // no backlog at the previous look
		{200, Backlog, true, 500, at(200), true},          // nothing acknowledged: alive stays
		{300, Backlog, false, 600, at(200), false},        // the counter cannot tell: no change
		{300, Backlog, true, 700, at(500), true},          // more acknowledged since the look at 500
	}
	for i, s := range steps {
		c.acked, c.unacked, c.ok = s.acked, s.unacked, s.ok
		alive, backlog := w.Look(at(s.now), 0)
		if !alive.Equal(s.alive) || backlog != s.backlog {
			t.Errorf("step %d: Look = %v, %v; want %v, %v", i, alive.Sub(t0), backlog, s.alive.Sub(t0), s.backlog)
		}
	}
}

func TestLookWithoutCounter(t *testing.T) {
	w := New(hbtest.NewChannel(spi.Provider, hbtest.Answering))
	if alive, backlog := w.Look(time.Now(), 0); !alive.IsZero() || backlog {
		t.Fatalf("Look on a channel without spi.AckCounter = %v, %v", alive, backlog)
	}
}

func TestGap(t *testing.T) {
	for limit, want := range map[time.Duration]time.Duration{
		time.Second: 250 * time.Millisecond, 3 * time.Second: 750 * time.Millisecond,
		time.Minute: MaxGap, time.Millisecond: time.Millisecond,
	} {
		if got := Gap(limit); got != want {
			t.Errorf("Gap(%v) = %v, want %v", limit, got, want)
		}
	}
}

// A look that ran late (this process stalled) dates the peer's
// acknowledgement to the previous look moved on by the lateness, not to
// the previous look: the stall is not the peer's silence. The date stays
// at most the lateness after the previous look, and never after now.
func TestLookLate(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := &counting{Channel: hbtest.NewChannel(spi.Consumer, hbtest.Answering), ok: true, unacked: Backlog}
	w := New(c)
	w.Look(at(0), 0)
	c.acked = 1
	// due at 250, ran at 2250: 2 s late
	if alive, _ := w.Look(at(2250), 2*time.Second); !alive.Equal(at(2000)) {
		t.Errorf("late look: alive at %v, want 2s (the previous look moved on by the lateness)", alive.Sub(t0))
	}
	c.acked = 2
	if alive, _ := w.Look(at(2300), time.Hour); !alive.Equal(at(2250)) {
		t.Errorf("lateness past now: alive at %v, want 2.25s (the previous look: never after now)", alive.Sub(t0))
	}
}

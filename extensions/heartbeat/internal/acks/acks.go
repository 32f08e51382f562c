// Package acks tells a heartbeat watch whether the peer is taking in what
// this side writes, from the channel's spi.AckCounter (TCP_INFO's
// bytes_acked and SIOCOUTQ on the bundled TCP transports).
//
// A side writing a large frame over a slow link reads nothing from the
// peer while it writes (its own pings queue behind the frame, the peer's
// answers too), so a watch that judges the peer from reads alone takes a
// busy connection for a dead one (an idle provider writing a
// 6 MiB response to a consumer on a 1 MiB/s link closed it after 5 s;
// both consumer strategies cut a 1 MiB upload at 1 Mbit/s). The peer's
// kernel acknowledging more of that backlog is a sign of life as good as a
// frame read: its kernel is receiving and its application is draining its
// receive window. A black-holed path acknowledges nothing, and a hung peer
// nothing once its receive window is full (on loopback, at once).
//
// Acknowledgements count only while a backlog of at least Backlog bytes
// waits unacknowledged, as in the exchange's liveness check: a few hundred
// bytes of small calls are acknowledged by a hung peer's kernel for
// minutes before its window fills, and must not keep it.
package acks

import (
	"time"

	"github.com/airnode/airnode/spi"
)

// Backlog is the unacknowledged bytes (written and not acknowledged yet,
// spi.AckCounter's unacked) from which the peer acknowledging more counts
// as a sign of life: 64 KiB, the exchange liveness check's threshold.
const Backlog = 64 << 10

// MaxGap is the longest a watch waits between two looks at the counter
// while a backlog waits (Gap).
const MaxGap = time.Second

// Gap returns how often a watch whose silence limit is limit looks at the
// counter while a backlog waits: min(limit/4, MaxGap), at least 1 ms. A
// look stamps the peer alive at the previous look, so with looks this
// close a peer draining the backlog never looks silent for limit, and a
// peer that stops is judged by the watch's own rule from its last
// acknowledgement, at most one gap late.
func Gap(limit time.Duration) time.Duration {
	return max(min(limit/4, MaxGap), time.Millisecond)
}

// Watch follows the counter of one channel between looks. Not safe for
// concurrent use: each heartbeat task keeps its own.
type Watch struct {
	ac      spi.AckCounter // nil: the channel cannot tell
	looked  time.Time      // the previous look; zero: none yet
	acked   uint64         // acknowledged bytes at that look
	backlog bool           // at least Backlog bytes unacknowledged at that look
	alive   time.Time      // see Look
}

// New returns a Watch of ch; it never reports progress when ch is no
// spi.AckCounter or its counter cannot tell (ok false).
func New(ch spi.Channel) *Watch {
	w := &Watch{}
	if a, ok := ch.(spi.AckCounter); ok {
		w.ac = a
	}
	return w
}

// Look reads the counter at now. alive is the latest time the peer is
// known to have been taking in a backlog of this side's writes (zero:
// never): when the peer acknowledged more since the previous look, and
// at least Backlog bytes were unacknowledged at that look, it is that
// previous look's time — the acknowledgement came after it, so the peer
// was alive then at the latest, never later than the truth — moved on by
// late, how much later than due this look runs (the check's timer fired
// late: this process did not run). Dated to the previous look alone, a
// look that ran late by a stall of this process would count the stall as
// the peer's silence; moved on by late, it makes the gap between the two
// looks what it was asked to be, and dates the peer at most late after
// the truth. backlog reports whether at least Backlog bytes are
// unacknowledged now: the caller should look again within Gap of its
// limit.
func (w *Watch) Look(now time.Time, late time.Duration) (alive time.Time, backlog bool) {
	if w.ac == nil {
		return w.alive, false
	}
	acked, unacked, ok := w.ac.Acked()
	if !ok {
		return w.alive, false
	}
	if !w.looked.IsZero() && w.backlog && acked > w.acked && w.looked.After(w.alive) {
		w.alive = w.looked
		if t := w.looked.Add(late); late > 0 && t.Before(now) {
			w.alive = t
		}
	}
	w.looked, w.acked, w.backlog = now, acked, unacked >= Backlog
	return w.alive, w.backlog
}

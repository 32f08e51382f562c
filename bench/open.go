package bench

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// Bounds of Config.Rate, calls per second: one call per 1,000 s to a
// million a second (more than one dispatching goroutine hands out).
const (
	MinRate = 0.001
	MaxRate = 1_000_000
)

// OpenLoop is what an open-loop run (Config.Rate) adds to its Report;
// its fields are the report's own in JSON ("rate", "late_starts",
// "late_worst_us", "not_started"), absent from a closed loop's.
type OpenLoop struct {
	Rate Rate `json:"rate"`
	// LateStarts counts the calls that started after their intended
	// time because no caller was free for them (all Config.Concurrency
	// callers busy), or for an earlier call still waiting; LateWorstUS is
	// the longest of those delays, µs (0 when none). Such a call's
	// latency counts from its intended time; a call a free caller took
	// counts from when it was handed out (the dispatcher's own timer lag
	// is not the service's latency).
	LateStarts  int64   `json:"late_starts"`
	LateWorstUS float64 `json:"late_worst_us"`
	// NotStarted counts the calls intended before the run stopped
	// starting calls that had not started by then, for want of a free
	// caller: an overloaded duration run stops at Config.Duration, as
	// wrk2 does; an interrupted one (ctx's end) when ctx ends. 0 for a
	// counted run that ran to its end, which makes all its calls.
	NotStarted int64 `json:"not_started"`
}

// Rate is an open-loop run's rate: Asked is Config.Rate; Reached is the
// calls started per second of the schedule they took, calls started ÷
// (the last one's start + 1/Asked), so that calls started on time reach
// Asked whatever the run's length, or ÷ the time the run stopped starting
// calls when it left some unstarted (OpenLoop.NotStarted); Callers is how many callers the run
// started (at most Config.Concurrency).
type Rate struct {
	Asked   float64 `json:"asked"`
	Reached float64 `json:"reached"`
	Callers int     `json:"callers"`
}

// openStats is what openLoop saw.
type openStats struct {
	slots      int64         // slots handed out
	late       int64         // of which no caller was free at their intended time
	worst      time.Duration // the longest such delay
	last       time.Duration // when the last slot was handed out, from start
	callers    int           // callers started
	notStarted int64         // slots intended before the dispatcher stopped (until, ctx's end) that it had not handed out
	stopped    time.Duration // when it stopped, from start, when notStarted was counted
}

// slot is one call handed to a caller: its intended start (from the
// phase's start) and whether it starts late for want of a free caller.
type slot struct {
	at   time.Duration
	late bool
}

// checkRate checks Config.Rate.
func checkRate(rate float64) error {
	if rate != 0 && !(rate >= MinRate && rate <= MaxRate) { // NaN fails both
		return fmt.Errorf("bench: rate %v: want %v to %d calls per second (0: a closed loop)", rate, MinRate, MaxRate)
	}
	return nil
}

// openLoop hands out the slots of an open-loop phase: slot i is intended
// to start i/rate after start; the phase has calls slots (0: no bound)
// and only those intended before until (0: no bound), and it stops
// handing out slots at until or when ctx ends (those intended by then and
// left waiting for a caller are openStats.notStarted). A
// slot goes to a free caller; when none is free a new caller starts for
// it, up to maxCallers, beyond which the slot waits for a caller and
// starts late. do makes the call of a slot for caller w (0 to
// maxCallers-1; one caller's calls never overlap) with that caller's own
// context; from, since start, is when the call's latency counts from:
// the slot's intended time when it starts late, else when the caller got
// it. openLoop returns at the end of the schedule (until, or the last
// slot's time + 1/rate), or when ctx ends, after every caller has
// returned.
func openLoop(ctx context.Context, start time.Time, rate float64, calls int64, until time.Duration, maxCallers int,
	do func(ctx context.Context, w int, from time.Duration)) openStats {
	var st openStats
	slots := make(chan slot) // unbuffered: a send succeeds only to a free caller
	var wg sync.WaitGroup
	caller := func(w int, s slot) {
		// each caller has a context of its own, as in the closed loop
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for ok := true; ok; s, ok = <-slots {
			from := s.at
			if !s.late {
				from = time.Since(start)
			}
			do(ctx, w, from)
		}
	}
	interval := float64(time.Second) / rate
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var deadline <-chan time.Time // until's
	if until > 0 {
		d := time.NewTimer(time.Until(start.Add(until)))
		defer d.Stop()
		deadline = d.C
	}
	end := until // the schedule's end: until, or the last slot's + interval
	if e := float64(calls) * interval; calls > 0 && e < math.MaxInt64 && (end == 0 || time.Duration(e) < end) {
		end = time.Duration(e)
	}
	// left is how many slots from slot i on were intended before now (or
	// until) and so are left unstarted when the dispatcher stops now
	left := func(i int64) int64 {
		by := time.Since(start)
		st.stopped = by
		if until > 0 {
			by = min(by, until)
		}
		return max(0, slotsBefore(by, interval, calls)-i)
	}
	// backlog is when the dispatcher last got a caller after waiting for
	// one: the slots intended before it waited too
	var backlog time.Duration
	done := ctx.Done()
dispatch:
	for i := int64(0); calls == 0 || i < calls; i++ {
		fat := float64(i) * interval
		if fat >= math.MaxInt64 {
			break // past 292 years: a bound that only a huge -n at a tiny rate reaches
		}
		at := time.Duration(fat)
		if until > 0 && at >= until {
			break
		}
		if wait := at - time.Since(start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-done:
				break dispatch
			}
		} else if ctx.Err() != nil {
			st.notStarted = left(i)
			break
		} else if until > 0 && time.Since(start) >= until {
			st.notStarted = left(i)
			break // behind schedule at the deadline: wrk2 starts no more
		}
		s := slot{at: at, late: at < backlog}
		select {
		case slots <- s:
		default:
			if st.callers < maxCallers {
				w := st.callers
				st.callers++
				wg.Go(func() { caller(w, s) })
				break
			}
			s.late = true
			select {
			case slots <- s:
				backlog = time.Since(start)
			case <-deadline:
				st.notStarted = left(i)
				break dispatch
			case <-done:
				// interrupted while the slots waited for a caller: those
				// intended by now were not started
				st.notStarted = left(i)
				break dispatch
			}
		}
		now := time.Since(start)
		if s.late {
			st.late++
			st.worst = max(st.worst, now-at)
		}
		st.slots++
		st.last = now
	}
	// the run lasts its schedule: the calls' rate is over it, and its
	// timeline lists it, the last call's interval too
	if wait := end - time.Since(start); wait > 0 && ctx.Err() == nil {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-done:
		}
	}
	close(slots)
	wg.Wait()
	return st
}

// slotsBefore returns how many slots of an open loop are intended before
// until, interval ns apart, at most calls (0: no bound).
func slotsBefore(until time.Duration, interval float64, calls int64) int64 {
	n := int64(math.Ceil(float64(until) / interval))
	if n > 0 && float64(n-1)*interval >= float64(until) {
		n--
	}
	if calls > 0 {
		n = min(n, calls)
	}
	return n
}

// result is the OpenLoop of st for rate.
func (st openStats) result(rate float64) *OpenLoop {
	o := &OpenLoop{Rate: Rate{Asked: rate, Callers: st.callers}, LateStarts: st.late,
		LateWorstUS: float64(st.worst) / float64(time.Microsecond), NotStarted: st.notStarted}
	if st.slots > 0 {
		span := st.last.Seconds() + 1/rate
		if st.notStarted > 0 {
			span = max(span, st.stopped.Seconds()) // to when it stopped: the slots it left count
		}
		o.Rate.Reached = float64(st.slots) / span
	}
	return o
}

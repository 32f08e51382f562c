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
// "late_worst_us"), absent from a closed loop's.
type OpenLoop struct {
	Rate Rate `json:"rate"`
	// LateStarts counts the calls that started after their intended
	// time because no caller was free for them (all Config.Concurrency
	// callers busy), or for an earlier call still waiting; LateWorstUS is
	// the longest of those delays, µs (0 when none). A late call's
	// latency counts from its intended time all the same.
	LateStarts  int64   `json:"late_starts"`
	LateWorstUS float64 `json:"late_worst_us"`
}

// Rate is an open-loop run's rate: Asked is Config.Rate; Reached is the
// calls started per second of the schedule they took, calls started ÷
// (the last one's start + 1/Asked), so that calls started on time reach
// Asked whatever the run's length; Callers is how many callers the run
// started (at most Config.Concurrency).
type Rate struct {
	Asked   float64 `json:"asked"`
	Reached float64 `json:"reached"`
	Callers int     `json:"callers"`
}

// openStats is what openLoop saw.
type openStats struct {
	slots   int64         // slots handed out
	late    int64         // of which no caller was free at their intended time
	worst   time.Duration // the longest such delay
	last    time.Duration // when the last slot was handed out, from start
	callers int           // callers started
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
// and only those intended before until (0: no bound). A slot goes to a
// free caller; when none is free a new caller starts for it, up to
// maxCallers, beyond which the slot waits for a caller and starts late.
// do makes the call of the slot intended at offset at for caller w
// (0 to maxCallers-1; one caller's calls never overlap) with that
// caller's own context. openLoop stops handing out slots when ctx ends and
// returns after every caller has returned.
func openLoop(ctx context.Context, start time.Time, rate float64, calls int64, until time.Duration, maxCallers int,
	do func(ctx context.Context, w int, at time.Duration)) openStats {
	var st openStats
	slots := make(chan time.Duration) // unbuffered: a send succeeds only to a free caller
	var wg sync.WaitGroup
	caller := func(w int, at time.Duration) {
		// each caller has a context of its own, as in the closed loop
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for ok := true; ok; at, ok = <-slots {
			do(ctx, w, at)
		}
	}
	interval := float64(time.Second) / rate
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
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
			break
		}
		waited := false
		select {
		case slots <- at:
		default:
			if st.callers < maxCallers {
				w := st.callers
				st.callers++
				wg.Go(func() { caller(w, at) })
				break
			}
			select {
			case slots <- at:
				waited = true
			case <-done:
				break dispatch
			}
		}
		now := time.Since(start)
		if waited {
			backlog = now
		}
		if waited || at < backlog {
			st.late++
			st.worst = max(st.worst, now-at)
		}
		st.slots++
		st.last = now
	}
	close(slots)
	wg.Wait()
	return st
}

// result is the OpenLoop of st for rate.
func (st openStats) result(rate float64) *OpenLoop {
	o := &OpenLoop{Rate: Rate{Asked: rate, Callers: st.callers}, LateStarts: st.late,
		LateWorstUS: float64(st.worst) / float64(time.Microsecond)}
	if st.slots > 0 {
		o.Rate.Reached = float64(st.slots) / (st.last.Seconds() + 1/rate)
	}
	return o
}

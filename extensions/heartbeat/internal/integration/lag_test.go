package integration

import (
	"sync/atomic"
	"testing"
	"time"
)

// lagTick is how long a lagMeter's goroutine sleeps at a time.
const lagTick = 50 * time.Millisecond

// lagMeter measures how late this test process's goroutines wake while it
// runs: one sleeps lagTick at a time and keeps the most it overslept. A
// heartbeat strategy's timers wake as late: a few milliseconds on a quiet
// machine, over a second on two CPUs at load 12 under -race, so a bound
// on when a strategy acts adds its timers' count times this.
type lagMeter struct {
	most atomic.Int64 // ns
	stop chan struct{}
	done chan struct{}
}

// startLagMeter starts a lagMeter, stopped when t ends.
func startLagMeter(t *testing.T) *lagMeter {
	m := &lagMeter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			start := time.Now()
			select {
			case <-m.stop:
				return
			case <-time.After(lagTick):
			}
			if late := int64(time.Since(start) - lagTick); late > m.most.Load() {
				m.most.Store(late)
			}
		}
	}()
	t.Cleanup(func() { close(m.stop); <-m.done })
	return m
}

// max returns the most a wake-up was late so far.
func (m *lagMeter) max() time.Duration { return time.Duration(m.most.Load()) }

// waitReasonLagging is waitReason with a wait of max plus steps times
// what m measures meanwhile.
func waitReasonLagging(ch <-chan string, max time.Duration, m *lagMeter, steps int) (string, bool) {
	start := time.Now()
	for {
		select {
		case r := <-ch:
			return r, true
		case <-time.After(lagTick):
		}
		if time.Since(start) > max+time.Duration(steps)*m.max() {
			return "", false
		}
	}
}

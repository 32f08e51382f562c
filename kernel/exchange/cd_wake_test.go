package exchange

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The budget's wakes (fix-cd). A handler that freed room in the Server's
// budget woke every channel waiting for it, though only the first of the
// turns could take the room (myTurn): with 500 connections that read
// nothing, 0.4 to 1.2 ms a wake, 1.5 to 2 wakes per handler started. Now
// a wake over the limit looks at the head of the turns only; the head
// wakes the next as it starts while room is left (takeBudget), and
// budgetPoll still wakes every waiting channel.

// waitingChannel returns a channel of a Server with budget b whose
// answers are large (turnChannel), holding unsent bytes unsent, with one
// request parked for the budget and waiting for it (unstall puts it in
// its pool, which runs nothing: pooled reports it).
func waitingChannel(b *unsentBudget, unsent int64) *Channel {
	c := turnChannel(b, unsent)
	c.pool = &workerPool{} // no worker: a request put back stays queued
	c.stallMu.Lock()
	c.stalled.Store(true)
	c.resumeAt.Store(budgetFree)
	c.parked = append(c.parked, task{c: c})
	c.nParked.Store(1)
	b.wait(c)
	c.stallMu.Unlock()
	return c
}

// pooled reports whether c's parked request was put back in its pool.
func pooled(c *Channel) bool { return c.pool.queuedLen() > 0 }

// A wake while the Server is over its limit looks at no channel that
// cannot start a handler: with the locks of 300 channels that read
// nothing held, it still returns, having put back the head's request
// only. Before, it looked at each waiting channel under its lock: it
// waited for the first of them.
func TestWake_OverTheLimitWakesTheHeadOnly(t *testing.T) {
	b := overBudget()
	b.polling = true // no budgetPoll: it would wake them all
	var stuck []*Channel
	for range 300 {
		stuck = append(stuck, waitingChannel(b, 1<<20)) // 1 MiB unread: may not start
	}
	head, next := waitingChannel(b, 0), waitingChannel(b, 0)
	if n := b.nWaiting.Load(); n != 302 {
		t.Fatalf("%d channels waiting; want 302", n)
	}
	for _, c := range stuck {
		c.stallMu.Lock() // busy: a wake that looks at it waits
	}
	done := make(chan struct{})
	go func() {
		b.wake() // a handler in the overdraft ended
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		for _, c := range stuck {
			c.stallMu.Unlock()
		}
		<-done
		t.Fatal("a wake over the limit waited for channels that read nothing (they could not start a handler); want it to look at the head of the turns only")
	}
	for _, c := range stuck {
		c.stallMu.Unlock()
	}
	if !pooled(head) || pooled(next) {
		t.Fatalf("after a wake: the head's request put back %v, the next one's %v; want the head's only (its turn)", pooled(head), pooled(next))
	}
	for i, c := range stuck {
		if pooled(c) {
			t.Fatalf("channel %d, holding 1 MiB unsent over the limit, had its request put back", i)
		}
	}
}

// No lost wake-up: each channel that can start a handler gets its turn
// as the head before it starts one (takeBudget wakes the next while room
// is left), as the overdraft frees (wake), and one that came to be able
// to start without an event of its own (its handler ran on its reader:
// runInline) by budgetPoll, though no wake looks at it.
func TestWake_NoChannelThatCanStartSleeps(t *testing.T) {
	b := overBudget()
	for range 100 {
		waitingChannel(b, 1<<20)
	}
	ready := make([]*Channel, overdraftHandlers+2)
	for i := range ready {
		ready[i] = waitingChannel(b, 0)
	}
	// a channel with a handler running: it cannot take a turn
	busy := turnChannel(b, 0)
	busy.answering.Store(1)
	busy.pool = &workerPool{}
	busy.stallMu.Lock()
	busy.stalled.Store(true)
	busy.resumeAt.Store(budgetFree)
	busy.parked = append(busy.parked, task{c: busy})
	busy.nParked.Store(1)
	busy.stallMu.Unlock()
	busy.unstall(false) // held: it waits for the budget
	if pooled(busy) || !busy.budgetWait.Load() || busy.budgetTurn.Load() {
		t.Fatalf("a channel with a handler running over the limit: put back %v, waiting %v, in the turns %v; want waiting, not in the turns",
			pooled(busy), busy.budgetWait.Load(), busy.budgetTurn.Load())
	}

	eventually := func(what string, c *Channel) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); !pooled(c); time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: its request not put back within 5s", what)
			}
		}
	}
	var slots []bool
	b.wake()
	for i, c := range ready[:overdraftHandlers] {
		eventually(fmt.Sprintf("ready channel %d (overdraft %d of %d)", i, b.overdraft.Load(), overdraftHandlers), c)
		_, slot, ok := c.takeBudget() // its worker runs the request
		if !ok || !slot {
			t.Fatalf("ready channel %d in its turn over the limit: ok %v, overdraft slot %v; want a slot", i, ok, slot)
		}
		c.answering.Store(1)
		slots = append(slots, slot)
	}
	last := ready[overdraftHandlers]
	time.Sleep(3 * budgetPoll)
	if pooled(last) {
		t.Fatalf("a channel had its request put back with the overdraft full (%d)", b.overdraft.Load())
	}
	b.overdraft.Add(-1) // a handler in the overdraft ends (runAnswering's release)
	b.wake()
	eventually("the next ready channel after a slot freed", last)

	// busy's handler ran on its reader and ended: nothing wakes it but
	// budgetPoll, and it joins the turns then, behind the last ready
	// channel, whose turn passes unused (its request never reaches a
	// worker) after turnGrace
	busy.answering.Store(0)
	b.overdraft.Add(-1)
	if _, _, ok := last.takeBudget(); !ok {
		t.Fatal("the last ready channel in its turn found no slot")
	}
	eventually("a channel whose handler ended on its reader", busy)
}

// The overdraft and the room under the limit are taken by
// compare-and-swap: however many channels start and end handlers at
// once, at most overdraftHandlers run in the overdraft, and those under
// the limit at most what it holds at their estimate (3 of 3 MiB under
// 8 MiB). Looked for while handlers ran past the budget
// (TestSmallAnswer_LargeAnswersKeepTheirPricing 28 of bound 24 once,
// reproduced on one CPU under -race): the cause was not this, but
// handlers of answers not yet known released after unknownWait while
// still running, on a process too starved to make its first answer by
// then (runAnswering); with that release off, 6 runs stayed at 6-7.
func TestBudget_HandlersAtOnceUnderStress(t *testing.T) {
	const limit = 8 << 20
	const channels = 64
	b := newUnsentBudget(limit)
	var running, peak, peakSlots atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(time.Second)
	for range channels {
		c := turnChannel(b, 0)
		c.pool = &workerPool{}
		wg.Go(func() {
			for time.Now().Before(stop) {
				cost, slot, ok := c.takeBudget()
				if !ok {
					runtime.Gosched()
					continue
				}
				c.answering.Add(1)
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if s := b.overdraft.Load(); s > peakSlots.Load() {
					peakSlots.Store(s)
				}
				runtime.Gosched()
				running.Add(-1)
				c.answering.Add(-1)
				b.making.Add(-cost) // runAnswering's release
				if slot {
					b.overdraft.Add(-1)
				}
				b.wake()
			}
		})
	}
	wg.Wait()
	within := int64((limit + 3*(1<<20) - 1) / (3 * (1 << 20))) // 3
	t.Logf("%d handlers at once at most (bound %d), %d in the overdraft (bound %d)", peak.Load(), within+overdraftHandlers, peakSlots.Load(), overdraftHandlers)
	if p := peak.Load(); p > within+overdraftHandlers {
		t.Errorf("%d handlers of 1 MiB answers at once (unsent.limit 8 MiB); want at most %d", p, within+overdraftHandlers)
	}
	if s := peakSlots.Load(); s > overdraftHandlers {
		t.Errorf("%d handlers in the overdraft; want at most %d", s, overdraftHandlers)
	}
	if m, s := b.making.Load(), b.overdraft.Load(); m != 0 || s != 0 {
		t.Errorf("all ended: making %d, overdraft %d; want 0", m, s)
	}
}

// BenchmarkWake measures one wake of the budget while the Server is over
// its limit, with n channels that read nothing waiting and one that may
// start (the head of the turns).
//
//	go test -run='^$' -bench='^BenchmarkWake$' ./kernel/exchange
func BenchmarkWake(b *testing.B) {
	for _, n := range []int{0, 50, 200, 500} {
		b.Run(fmt.Sprintf("stuck=%d", n), func(b *testing.B) {
			budget := overBudget()
			budget.polling = true // no budgetPoll: wakes only
			for range n {
				waitingChannel(budget, 1<<20)
			}
			head := waitingChannel(budget, 0)
			b.ResetTimer()
			for range b.N {
				budget.wake()
				b.StopTimer()
				head.pool = &workerPool{}
				head.stallMu.Lock()
				if !head.stalled.Load() {
					head.stalled.Store(true)
					head.resumeAt.Store(budgetFree)
					head.parked = append(head.parked, task{c: head})
					head.nParked.Store(1)
				}
				budget.wait(head)
				head.stallMu.Unlock()
				b.StartTimer()
			}
		})
	}
}

package exchange

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
)

// Slow consumers. The Server's budget stops the channels that hold
// answers unread while their sum is over unsent.limit (overFree,
// budgetHolds), but each still holds what it made before it stopped,
// budgetFree and an answer or so, and a connection that never reads
// never gives it back (1,000 of them: about 130 MB). So, as NATS closes a
// slow consumer, a provider closes a connection that holds budgetFree or
// more unsent of which nothing was written for Options.SlowConsumerAfter
// (5 s by default), while the Server's channels together held
// unsent.limit or more all that time: logged at Warn ("channel closed",
// reason "slow consumer: ..." with the peer's address and the bytes it
// held; rate-bounded) and counted in counters.Channels.SlowConsumerCloses
// (airnode_slow_consumer_closes_total). A consumer that reads 64 KiB or
// more every SlowConsumerAfter has some of its answers written meanwhile
// (the writer hands the stream writeChunk at a time, each counted in
// writer.wrote) and is not closed, nor is any connection while the
// Server is under its limit.
//
// The watch starts when the channel's unsent reaches budgetFree
// (writer.addUnsent) and looks every slowConsumerCheck while it stays
// there: one timer per connection holding answers, none for the others.
// The Server-wide bound stops a connection that reads nothing and keeps
// it stopped; closing it is what gives its memory back.
const slowConsumerCheck = time.Second

// watchSlow starts the slow-consumer watch of the channel unless it runs.
func (c *Channel) watchSlow() {
	if c.slowWatch.Load() || !c.slowWatch.CompareAndSwap(false, true) {
		return
	}
	c.slowMark.Store(c.w.wrote.Load())
	c.slowSince.Store(mono())
	time.AfterFunc(slowConsumerCheck, c.checkSlow)
}

// checkSlow is the slow-consumer watch's look (see above): it closes the
// channel, or looks again after slowConsumerCheck, or ends the watch once
// the channel holds under budgetFree or has died.
func (c *Channel) checkSlow() {
	select {
	case <-c.dying:
		c.slowWatch.Store(false)
		return
	default:
	}
	u := c.w.unsent.Load()
	if u < budgetFree {
		c.slowWatch.Store(false)
		if c.w.unsent.Load() >= budgetFree {
			c.watchSlow() // reached it again meanwhile, missed by addUnsent
		}
		return
	}
	now := mono()
	b := c.w.budget
	switch w := c.w.wrote.Load(); {
	case w != c.slowMark.Load():
		c.slowMark.Store(w)
		c.slowSince.Store(now)
	case !b.over():
		c.slowSince.Store(now)
	case now-c.slowSince.Load() >= int64(c.opts.SlowConsumerAfter):
		c.slowWatch.Store(false)
		c.dieCounted(fmt.Sprintf("slow consumer: %.1f MiB of answers unread, none written for %v, while the provider's consumers together held %.1f MiB unread and %.1f MiB being made, over unsent.limit %s",
			float64(u)/(1<<20), time.Duration(now-c.slowSince.Load()).Round(time.Second),
			float64(b.held.Load())/(1<<20), float64(b.making.Load())/(1<<20), protocol.FormatSize(b.limit)),
			slog.LevelWarn, &counters.Channels.SlowConsumerCloses)
		return
	}
	time.AfterFunc(slowConsumerCheck, c.checkSlow)
}

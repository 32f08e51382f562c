package exchange

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
)

// Write-side backpressure. A provider kept reading
// the requests of a consumer that read none of its answers, queueing the
// answers without bound (1 GB in 8 s). Now, while the bytes a channel has
// queued or is writing for its peer (writer.unsent: the writer's buffer,
// its sealed batches, the batch being written, and the answers waiting in
// a goroutine of their own for room or for a stream of their own) are at
// or over highWater, the channel's readers read no new frame, and the
// worker pool runs none of its queued requests (they are parked, costing
// their request body only); both go on once the bytes fall under
// lowWater. This is Netty's channel writability (Dubbo runs on it: a high
// and a low water mark, 64 and 32 KiB there) applied to reading, as
// gRPC-Go stops reading a transport while too many control frames are
// queued (maxQueuedTransportResponseFrames, the fix for CVE-2019-9512 and
// CVE-2019-9515). A consumer that does not read thus pins about highWater
// plus the answers of the handlers that were already running (each at most
// payload), and the rest of the provider goes on serving other consumers.
// Heartbeat answers, refusals (SERVER_THREADPOOL_EXHAUSTED, BAD_REQUEST)
// and not-run answers count like any other answer.
//
// A reader that reads costs one atomic load per frame for it. A stopped
// reader still ends with its channel (Close, the heartbeat's verdict on a
// channel with nothing read or written for heartbeat.timeout, Server
// shutdown), and reads again once its session is done (spi.Session.Done:
// the peer closed or the connection failed), to find the end; while it is
// stopped, a go-away's ping goes unanswered and
// Shutdown waits for it no longer than before (goAwayAckWait).
//
// highWater is the default payload (8 MiB), not the writer's maxQueued
// (4 MiB): at 4 MiB, one 4 MiB answer on its way to a consumer that reads
// it stopped the reader until it was written, and the small calls behind
// it on that connection waited (BenchmarkMixedLargeSmall: p99 6.6 ms ->
// 15 ms on smux, mean x2 on one stream).
const (
	highWater = 8 << 20       // stop reading at or over it
	lowWater  = highWater / 2 // read again under it
)

// The Server-wide bound. Each channel's own bound still let
// many consumers that read nothing pin highWater each, plus the answers
// of handlers already running (100 such connections: 1.6 GB). So a
// Server also bounds the answers its channels hold unsent together
// (Options.UnsentLimit, URL key unsent.limit, default 256 MiB): a channel
// counts only what it holds beyond budgetFree — Netty's default high
// water mark, which a channel whose consumer reads rarely reaches, so the
// shared counter is not touched per frame on the common path — and while
// the sum is at or over the limit, a channel holding budgetStop or more
// stops reading (and parks its queued requests) as at highWater, until it
// holds under budgetFree. Channels whose consumers read keep going, a
// stop-and-go per budgetStop of answers; those that do not stay stopped.
const (
	budgetFree = 64 << 10  // per channel, not counted in the Server's sum
	budgetStop = 256 << 10 // under pressure, stop reading at or over it
)

// unsentBudget is a Server's bound on the answers its channels hold
// unsent together (Options.UnsentLimit).
type unsentBudget struct {
	limit  int64
	held   atomic.Int64 // the sum over the channels of max(0, unsent - budgetFree)
	making atomic.Int64 // the answers being made, each at makingCost times its channel's budgetEstimate when that is budgetFree or more (takeBudget)
	large  atomic.Int64 // mono() when an answer of budgetFree or more was last made (noteAnswer); 0: never
	// handlers started while the sum was at or over limit, running
	// (overdraftHandlers bounds them)
	overdraft atomic.Int64
	// channels with requests parked by budgetHolds, woken (wake) when a
	// handler counted in making ends or held falls under limit
	mu       sync.Mutex
	waiting  []*Channel // on mu
	polling  bool       // a wake is scheduled after budgetPoll; on mu
	nWaiting atomic.Int64
	// the channels waiting for room that could start a handler when they
	// began to wait, in that order (turns): a list linked through
	// Channel.turnPrev and turnNext
	turnFirst, turnLast *Channel // on mu
	head                *Channel // the channel whose turn it is, when last looked; on mu
	headAt              int64    // mono() when head's turn began; on mu
	nTurns              atomic.Int64
}

// wait puts c in the list of channels that wake wakes, and at the end of
// the turns if it is not in them and could start a handler (queueTurn).
// On c.stallMu.
func (b *unsentBudget) wait(c *Channel) {
	b.queueTurn(c)
	if c.budgetWait.Load() || !c.budgetWait.CompareAndSwap(false, true) {
		return
	}
	b.mu.Lock()
	b.waiting = append(b.waiting, c)
	b.nWaiting.Store(int64(len(b.waiting)))
	if !b.polling {
		// a wake that ran between the channel's look and its joining
		// the list is not lost: the list is woken again after budgetPoll
		b.polling = true
		time.AfterFunc(budgetPoll, func() {
			b.mu.Lock()
			b.polling = false
			b.mu.Unlock()
			b.wakeAll()
		})
	}
	b.mu.Unlock()
}

// budgetPoll is how often every channel waiting for the budget looks
// again (wakeAll) while any waits, besides the wakes when room is freed
// (wake): it catches a channel whose look raced with a wake, and one that
// came to be able to start without an event of its own (its estimate
// fell, its handler ran on its reader).
const budgetPoll = 50 * time.Millisecond

// wake lets the channels waiting for the budget that can take the room
// just freed look again (a handler counted in making ended, a channel
// ended, a handler started with room left): the first of the turns that
// may start a handler (turnHeadLocked), the only one that may take room
// while others wait (myTurn); when it starts, takeBudget wakes the next
// while room is left, so as many start as the room allows, in turn. With
// none of the turns able to start and the Server under its limit, every
// waiting channel looks again (wakeAll): a channel with a handler running
// may then start another. Over the limit with none in the turns, nobody
// waiting can take the room (budgetHolds): nobody is woken, and budgetPoll
// catches any that came to be able to. A wake thus costs O(1) however many
// channels wait while the Server is over its limit: it woke every waiting
// channel, 0.4 to 1.2 ms with 500 connections that read nothing, 1.5 to 2
// wakes per handler started. Not on any channel's stallMu.
func (b *unsentBudget) wake() {
	if b.nWaiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	h := b.turnHeadLocked(nil)
	b.mu.Unlock()
	switch {
	case h != nil:
		h.unstall(false) // not waiting any more (its request is on its way to a worker): nothing
	case !b.over():
		b.wakeAll()
	}
}

// wakeAll lets every channel waiting for the budget look again, those
// that have not answered yet first, then oldest first: each that still
// finds none (unstall, budgetHolds) waits again. Which of them gets the
// room is the turns' choice (myTurn), not this order. Not on any
// channel's stallMu.
func (b *unsentBudget) wakeAll() {
	if b.nWaiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	list := b.waiting
	b.waiting = nil
	b.nWaiting.Store(0)
	b.mu.Unlock()
	// Channels that have not answered yet first: a new consumer's first
	// call is not queued behind the requests of every connection that
	// reads nothing (an airnode call took 4.5 s of its 5 s timeout behind
	// 40 such connections), and each connection has one first answer.
	for _, first := range []bool{true, false} {
		for _, c := range list {
			if (c.answerSize.Load() == 0) == first {
				c.budgetWait.Store(false)
				c.unstall(false)
			}
		}
	}
}

// Turns. Woken together, the channels waiting for room raced for it, and
// the channel whose handler had just ended won most of the time: its
// worker resumed its next parked request before the woken channels'
// requests reached a worker. 24 connections pipelining requests for
// 2 MiB answers and reading none (TestUnsentLimit_SlowReadersMakeFewAnswersAtOnce):
// 33 of 46 and 55 of 73 freed overdraft slots went back to the channel
// that freed them, and a consumer that reads waited for 12 to 72 of the
// about 80 handlers still to start. So while channels wait, room goes
// to them in the order they began to wait (turns): a channel that is not
// the first of them that may start a handler (mayTakeTurn) is held
// (budgetHolds, takeBudget) and waits behind them, and one that starts a
// handler leaves the turns, so its next request waits at their end. A
// consumer that reads thus waits for at most one handler of each other
// connection. A channel whose turn came and that starts nothing within
// turnGrace (its request waits for a worker, or it no longer needs room)
// goes to the end, so the turns never stop on it. Without waiting
// channels the check is one atomic load; answers known small (under
// budgetFree) take no turn.
//
// A channel that could not start a handler (mayTakeTurn: one running,
// budgetStop unsent) takes no turn either: it joins the turns when it
// waits and could, and leaves them when a look passes it while it
// cannot. Kept in them, the channels of consumers that read nothing
// stayed ahead of every other, and each look at the turns walked past
// all of them: 500 such connections and 4 consumers that read 512 KiB
// answers, 500 channels looked at per look, 95 µs under the budget's
// lock, about 2.3 looks per handler started.
const turnGrace = time.Second

// queueTurn puts c at the end of the turns unless it is in them or could
// not start a handler now (mayTakeTurn): such a channel holds up nobody,
// and joins the turns when it waits again and can (wait runs on every
// wake and every budgetPoll while it has requests parked). A channel
// whose consumer reads nothing thus never enters the turns, and the
// channels in them that could take a turn are not behind it.
func (b *unsentBudget) queueTurn(c *Channel) {
	if c.budgetTurn.Load() || !c.mayTakeTurn() {
		return
	}
	b.mu.Lock()
	if !c.budgetTurn.Load() {
		b.linkTurnLocked(c)
	}
	b.mu.Unlock()
}

// leaveTurn takes c out of the turns, if it is in them: it started a
// handler, or it ended.
func (b *unsentBudget) leaveTurn(c *Channel) {
	if !c.budgetTurn.Load() {
		return
	}
	b.mu.Lock()
	if c.budgetTurn.Load() {
		b.unlinkTurnLocked(c)
	}
	b.mu.Unlock()
}

// linkTurnLocked puts c, not in the turns, at their end. On mu.
func (b *unsentBudget) linkTurnLocked(c *Channel) {
	c.turnPrev, c.turnNext = b.turnLast, nil
	if b.turnLast != nil {
		b.turnLast.turnNext = c
	} else {
		b.turnFirst = c
	}
	b.turnLast = c
	c.budgetTurn.Store(true)
	b.nTurns.Add(1)
}

// unlinkTurnLocked takes c, in the turns, out of them. On mu.
func (b *unsentBudget) unlinkTurnLocked(c *Channel) {
	if c.turnPrev != nil {
		c.turnPrev.turnNext = c.turnNext
	} else {
		b.turnFirst = c.turnNext
	}
	if c.turnNext != nil {
		c.turnNext.turnPrev = c.turnPrev
	} else {
		b.turnLast = c.turnPrev
	}
	c.turnPrev, c.turnNext = nil, nil
	c.budgetTurn.Store(false)
	b.nTurns.Add(-1)
	if b.head == c {
		b.head = nil
	}
}

// myTurn reports whether c may take room in the budget now: no channel
// waits, or none ahead of c in the turns may start a handler
// (mayTakeTurn). Channels ahead of c that ended or may not start one
// leave the turns here (they join their end again when they wait and
// can: queueTurn), so each channel is looked at past once per time it
// joined, and a look costs O(1) amortized however many channels wait;
// the first that may start one and has not for turnGrace goes to their
// end.
func (b *unsentBudget) myTurn(c *Channel) bool {
	if b.nTurns.Load() == 0 {
		return true
	}
	b.mu.Lock()
	h := b.turnHeadLocked(c)
	b.mu.Unlock()
	return h == nil || h == c
}

// turnHeadLocked returns the first channel of the turns that may start a
// handler (mayTakeTurn), or c if it comes first, or nil when none may:
// those ahead of it that ended or may not leave the turns, and one whose
// turn came and passed unused for turnGrace goes to their end. On mu.
func (b *unsentBudget) turnHeadLocked(c *Channel) *Channel {
	now := mono()
	for t := b.turnFirst; t != nil; t = b.turnFirst {
		if t == c {
			return c
		}
		select {
		case <-t.dying:
			b.unlinkTurnLocked(t)
			continue
		default:
		}
		if !t.mayTakeTurn() {
			b.unlinkTurnLocked(t)
			continue
		}
		if t != b.head {
			b.head, b.headAt = t, now
		}
		if now-b.headAt < int64(turnGrace) {
			return t
		}
		// its turn passed unused: to the end, the next one's turn
		b.unlinkTurnLocked(t)
		b.linkTurnLocked(t)
	}
	return nil
}

// mayTakeTurn reports whether the channel would start a request if the
// budget had room for it: its answers are large, it has no handler
// running and holds under budgetStop (budgetHolds), and not budgetFree
// over the limit (overFree). A waiting channel that may not does not
// hold up those behind it.
func (c *Channel) mayTakeTurn() bool {
	return c.answering.Load() == 0 && c.w.unsent.Load() < budgetStop && !c.overFree() && c.budgetEstimate() >= budgetFree
}

// newUnsentBudget returns the bound for Options.UnsentLimit limit: nil
// (none) when negative, DefaultUnsentLimit when 0.
func newUnsentBudget(limit int64) *unsentBudget {
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = DefaultUnsentLimit
	}
	return &unsentBudget{limit: limit}
}

// over reports whether the channels together hold the limit or more,
// unsent and being made.
func (b *unsentBudget) over() bool { return b.held.Load()+b.making.Load() >= b.limit }

// addUnsent adds d (negative: written or dropped) to the bytes unsent for
// the peer and returns the new count; the Server's budget follows the
// part over budgetFree. Concurrent adds each see one step of the count,
// so the budget gets the right sum.
func (w *writer) addUnsent(d int64) int64 {
	n := w.unsent.Add(d)
	if b := w.budget; b != nil {
		if n >= budgetFree && n-d < budgetFree && w.watch != nil {
			w.watch() // slowconsumer.go
		}
		if delta := max(n-budgetFree, 0) - max(n-d-budgetFree, 0); delta != 0 {
			b.held.Add(delta)
			counters.Channels.UnsentHeld.Add(delta)
		}
	}
	return n
}

// settleBudget takes what a finished channel still counted (answers
// queued when it died, never written) out of the Server's budget. Every
// goroutine of the channel has ended: nothing adds to unsent any more.
func (c *Channel) settleBudget() {
	if b := c.w.budget; b != nil {
		d := -max(c.w.unsent.Swap(0)-budgetFree, 0)
		b.held.Add(d)
		counters.Channels.UnsentHeld.Add(d)
		b.leaveTurn(c)
		b.wake()
	}
}

// overHighWater reports whether the peer has highWater bytes or more
// unsent, or budgetStop or more while the Server's channels together are
// over its UnsentLimit: one atomic load on the common path.
func (c *Channel) overHighWater() bool {
	u := c.w.unsent.Load()
	return u >= highWater || u >= budgetStop && c.w.budget != nil && c.w.budget.over()
}

// Answers being made. The readers stop at highWater, but the requests
// they read before that all go to the worker pool, and up to
// Options.Workers of them could start at once, before the first answer
// was counted in unsent: one consumer that pipelined 2,000 tiny requests
// for 1 MB answers in one write and read none had 160 to 256 answers made
// at once (240 to 410 MB of heap, RSS to 490 MB; tester34 F4), whatever
// its connection's highWater. So a worker also parks a two-way request
// while the answers unsent and being made reach highWater (withMaking):
// each handler running (answering) but the first counts as answerSize
// bytes, an
// estimate of the channel's answers that follows a larger answer at once
// and a smaller one by half the difference (a decaying maximum, so that
// one small answer between large ones does not hide them). A connection
// whose answers are small is not held back; one whose answers are large
// has at most about highWater/answerSize of its requests running at once
// (8 for 1 MiB answers), whether its consumer reads or not: answers
// written to the socket's buffer leave unsent at once, so bounding only
// while unsent was high let every worker start one (250 MB again).
//
// Before the channel's first answer a running handler counts as
// highWater/firstAnswers: at most firstAnswers of its requests start
// before its first answer, twice as many after firstAnswerWait from its
// first request, four times after twice that, and so on (TCP's slow
// start) — handlers that take long (a long poll, Sleep) are no sign of
// answers piling up, and the requests parked behind them start within a
// few firstAnswerWait (1,000 within 0.6 s without the Server's budget).
// The Server's budget (unsent.limit, on by default) has a slower start of
// its own before the channel's first answer, four times as many per
// unknownWait (budgetEstimate): with it, 256 long calls on a new
// connection all start within about 1.6 s, 1,000 within 2 s. Handlers
// that start slow and then answer large (all of them blocked on one lock,
// say) are thus not bounded by the channel before their first answer.
const (
	firstAnswers    = 16
	firstAnswerWait = 100 * time.Millisecond
)

// answerEstimate returns the bytes each running handler of the channel is
// expected to add to unsent: answerSize, or before the channel's first
// answer highWater/firstAnswers halved for each firstAnswerWait since its
// first request.
func (c *Channel) answerEstimate() int64 {
	if n := c.answerSize.Load(); n > 0 {
		return n
	}
	waits := int64(0)
	if first := c.firstAt.Load(); first != 0 {
		waits = (mono() - first) / int64(firstAnswerWait)
	}
	return highWater / firstAnswers >> min(waits, 62)
}

// firstRequest notes the channel's first two-way request run by a worker
// (firstAt) and, every firstAnswerWait until the channel's first answer,
// puts back in the pool the requests parked for want of it that now have
// room: all of them, not resumeBatch (unstall puts back resumeBatch at a
// time, the rest as those end, and handlers that take long end late).
func (c *Channel) firstRequest() {
	if c.firstAt.Load() != 0 || !c.firstAt.CompareAndSwap(0, mono()) {
		return
	}
	var tick func()
	tick = func() {
		for n := c.nParked.Load(); n > 0; {
			c.unstall(false)
			m := c.nParked.Load()
			if m >= n {
				break // no room
			}
			n = m
		}
		select {
		case <-c.dying:
			return
		default:
		}
		if c.answerSize.Load() == 0 {
			time.AfterFunc(firstAnswerWait, tick)
		}
	}
	time.AfterFunc(firstAnswerWait, tick)
}

// noteAnswer folds an answer of n bytes into answerSize. Concurrent
// callers may lose one another's step: it is an estimate.
func (c *Channel) noteAnswer(n int64) {
	if b := c.w.budget; b != nil && n >= budgetFree {
		b.large.Store(mono())
	}
	old := c.answerSize.Load()
	est := n
	if n < old {
		est = old - (old-n)/2
	}
	if est != old {
		c.answerSize.Store(est)
	}
}

// withMaking returns unsent u plus the answers being made (the running
// handlers beyond the first times answerEstimate): what runQueued bounds
// by highWater. The first is not counted, so that one large answer being
// made does not park the small calls behind it (BenchmarkMixedLargeSmall
// single-stream, two noisy runs on a loaded machine: p99 2.2 and 2.6 ms
// before any of this, 3.7 and 3.1 ms with the first counted, 2.4 and
// 2.9 ms without).
func (c *Channel) withMaking(u int64) int64 {
	if n := c.answering.Load(); n > 1 {
		return u + (n-1)*c.answerEstimate()
	}
	return u
}

// overDispatch reports whether a worker should park a two-way request
// rather than run it: overHighWater, or the answers unsent and being made
// reach highWater, or the Server's budget holds it (budgetHolds,
// overFree).
func (c *Channel) overDispatch() bool {
	return c.overHighWater() || c.withMaking(c.w.unsent.Load()) >= highWater || c.budgetHolds() || c.overFree()
}

// Answers known small. Before a channel's first answer nothing tells a
// handler making an 8 MB answer from one sleeping 1.5 s to return an
// int, so both are counted at the slow start's guesses (answerEstimate,
// budgetEstimate): 50 parallel Sleep(1500) calls with a 1.8 s timeout on
// a fresh provider started about 10 handlers, then 4 times as many per
// unknownWait, and 39 timed out (tester81 #1, tester85 #1). But a method
// whose results are all of a fixed size (an int and an error) is known
// small before it runs: the kernel says so per request
// (Options.SmallAnswer, from its method tables). Such a request is not
// counted in answering, so neither the channel's slow start (withMaking)
// nor the Server's making (takeBudget) counts it, and the Server's budget
// does not hold it (budgetHolds is not asked): a burst of them starts at
// once, as many as the worker pool runs. What bounds it is what its
// answers, at most SmallAnswerMax each, once made, add to unsent: the
// channel stops at highWater as always, and overFree still parks it while
// the channel holds budgetFree over the Server's limit (a consumer that
// reads nothing). The lookup costs a parse of the body's first two
// strings and a map look-up or two, only while the budget would matter:
// never once the channel's answers are known to be small (answerSize
// under budgetFree, the common case), and once per request (task.small).
// A request parked for other reasons (its channel's consumer reads
// nothing) waits in the channel's queue with the others, whose unstall
// the Server's budget may still hold.

// smallAnswer reports whether t, a two-way request, is for a method whose
// answers are known small (Options.SmallAnswer), looking it up only
// while the channel's answers are not known to be small (answerSize 0 or
// budgetFree and more), and once per request (t.small).
func (c *Channel) smallAnswer(t *task) bool {
	switch {
	case t.small != 0:
		return t.small > 0
	case c.opts.SmallAnswer == nil:
		return false
	}
	if n := c.answerSize.Load(); n > 0 && n < budgetFree {
		return false // known small already: nothing to spare it
	}
	t.small = -1
	if service, method, ok := protocol.RequestName(t.body); ok && c.opts.SmallAnswer(intern(service), intern(method)) {
		t.small = 1
	}
	return t.small > 0
}

// overSmall reports whether a worker should park a request whose answer
// is known small (smallAnswer): overHighWater, or the answers unsent and
// being made reach highWater, or overFree; never for the Server's budget
// alone (budgetHolds).
func (c *Channel) overSmall() bool {
	return c.overHighWater() || c.withMaking(c.w.unsent.Load()) >= highWater || c.overFree()
}

// Small answers over the Server's limit. Answers under budgetFree touch
// nothing shared while they are made (takeBudget), and a channel stopped
// reading only at budgetStop, so each connection whose consumer read
// nothing went on starting handlers, a burst of firstAnswers and then up
// to highWater of small answers, until it held budgetStop or more: 200
// connections pipelining 80 requests each for 60 KB answers and reading
// none held 89 MiB unsent with unsent.limit=4MiB, about 450 KB each
// whatever the limit (tester71 #1: 1,000 connections). Now, while the Server's
// channels together hold unsent.limit or more, a channel whose answers
// unsent and being made (withMaking: the first running handler uncounted,
// the others at answerEstimate) reach budgetFree starts none of its
// requests (overFree) until they are under budgetFree again (resumeAt):
// each connection that reads nothing holds at most budgetFree plus the
// answer of the handler it had running, whatever the number of
// connections. A consumer that reads keeps its answers under budgetFree
// and goes on; one whose answers are small (100-byte Echo calls) goes on
// with many handlers running.

// overFree reports whether the Server's budget keeps the channel from
// starting a request whatever its answers' size: its answers unsent and
// being made reach budgetFree while the Server's channels together hold
// unsent.limit or more.
func (c *Channel) overFree() bool {
	b := c.w.budget
	return b != nil && c.withMaking(c.w.unsent.Load()) >= budgetFree && b.over()
}

// Answers being made, Server-wide. Each channel's bound on the answers it
// makes (withMaking) still let every connection start handlers for about
// highWater of answers, more before its first answer (firstAnswers,
// doubled every firstAnswerWait, which handlers making 4 MB answers on a
// loaded machine outlast): six consumers pipelining 50 requests for 4 MB
// answers each and reading none held 355 MB to 2.5 GB with
// unsent.limit=8MiB, "42 handlers running" on one connection (tester49
// finding 2). So a handler whose channel expects answers of budgetFree or
// more (budgetEstimate) counts that estimate in the Server's making while
// it runs, and while the answers unsent and being made together reach
// unsent.limit, a channel starts none of its requests while it has one
// running or holds budgetStop or more unsent, and the others start
// within the overdraft (below). A
// channel whose answers are small (under budgetFree) neither counts nor
// is held back: its handlers touch nothing shared.

// budgetEstimate is what a running handler of the channel counts in the
// Server's making: answerSize, or before the channel's first answer the
// channel's payload (the largest answer it may send, 8 MiB by default),
// quartered for each unknownWait since its first request while no answer
// of budgetFree or more was made on the Server within unknownRelease
// (largeRecently), and payload again as soon as one was. Counted at
// highWater/firstAnswers (512 KiB) from the start, 512 handlers of
// answers not yet known filled the default unsent.limit, so every worker
// started one: 40 connections that pipelined requests for 8 MB answers
// and read none had 256 made at once, 6.2 to 9.5 GB of heap (tester68
// F5). At payload (times makingCost), about unsent.limit/(3*payload) of
// them start at once (10 by default), and overdraftHandlers beyond that.
//
// Each is released after unknownWait (runAnswering), so four times as
// many start after each unknownWait: 256 long calls on a new connection
// within about 1.6 s, 1,000 within 2 s. Counted at payload until it
// ended or for 2 s, 10 started per 2 s: 33 of 256 Sleep calls had started
// after 5 s. Quartered per unknownWait, not halved per firstAnswerWait as
// answerEstimate is: answers slow to make are no sign that they are small,
// and halving so let every handler of six connections making 4 MB
// answers start once their first answers took over 400 ms. Answers that
// take longer than unknownWait to make before any large answer was made
// on the Server still start faster than they did (4, 16, 64 times 10 per
// unknownWait), until the first of them is made.
func (c *Channel) budgetEstimate() int64 {
	if n := c.answerSize.Load(); n > 0 {
		return n
	}
	first := c.firstAt.Load()
	if first == 0 || c.w.budget == nil || c.w.budget.largeRecently() {
		return c.payload
	}
	return c.payload >> min(2*((mono()-first)/int64(unknownWait)), 62)
}

// largeRecently reports whether an answer of budgetFree or more was made
// on the Server within unknownRelease.
func (b *unsentBudget) largeRecently() bool {
	l := b.large.Load()
	return l != 0 && mono()-l < int64(unknownRelease)
}

// A handler that started before its channel's first answer counts in the
// Server's making (at budgetEstimate) for unknownWait, and after that as
// long as answers of budgetFree or more were made on the Server within
// unknownRelease (largeRecently), looking again every unknownWait: one
// that has not answered by then, while no large answer is being made, is
// more likely waiting (a long poll) than making a large answer, and 100
// of them on one connection would otherwise hold every later request of
// that connection until one ended (10 fill the default unsent.limit;
// TestCancelBurstDoesNotHurtOtherCalls). While large answers are being
// made, it goes on counting: released after 2 s regardless, handlers
// slowed by 40 connections' 8 MB answers on two CPUs let every worker
// start one again (4.2 GB of heap with unsent.limit=32MiB). unknownWait
// is longer than the 300 ms the answers of
// TestUnsentLimit_UnknownAnswersCountAtPayload take to make: at 400 ms,
// under -race, 2 of its 5 runs had up to 17 handlers and 40 MiB unsent
// (6 or 7 and 22 MiB at most otherwise). A process too starved to make
// its first large answer within unknownWait releases its first handlers
// the same way, still running, and those that start in their room count
// at the smaller estimate: on one CPU under -race, with the machine at
// load 13, TestSmallAnswer_LargeAnswersKeepTheirPricing ran 28 handlers
// at once (its bound 24) in 1 run of 4, and 6 or 7 in 6 runs with this
// release turned off. The counts themselves are exact
// (TestBudget_HandlersAtOnceUnderStress).
const (
	unknownWait    = 5 * firstAnswerWait
	unknownRelease = 2 * time.Second
)

// The overdraft. Letting each channel that had no handler running start
// one while the Server was over its limit (so that consumers that read
// go on) let every connection make an answer at once: 40 connections
// pipelining requests for 8 MB answers (10.7 MB in JSON, refused as over
// payload) and reading none still ran 56 handlers at once, 2.1 to 4 GB of
// heap in use (tester68 F5, after the fix above). Now, while the answers
// unsent and being made reach unsent.limit, at most overdraftHandlers
// handlers of large or not yet known answers run beyond it, the whole
// Server together, each channel's in turn (turns: in the order they
// began to wait, woken as handlers end, and every budgetPoll); a channel whose
// answers are small (under budgetFree) is not held. A consumer that reads
// thus waits for one of them (its first call, before its answers are
// known to be small), however many connections do not read.
//
// A handler counts in the Server's making at makingCost times its
// channel's estimate: making an answer holds the method's value, the
// codec's buffer and the frame at once (encoding/json's buffer grows by
// doubling, then is copied into the frame), about three to four times the
// answer's size in the heap profile of the attack above, where the
// answer, once made, holds its frame alone.
const (
	overdraftHandlers = 4
	makingCost        = 3
)

// budgetHolds reports whether the Server's budget keeps the channel from
// starting a request (see above): its answers are large, it has a handler
// running or budgetStop unsent, and the Server's channels hold
// unsent.limit or more unsent and being made.
func (c *Channel) budgetHolds() bool {
	b := c.w.budget
	if b == nil || c.budgetEstimate() < budgetFree {
		return false
	}
	if c.answering.Load() == 0 && c.w.unsent.Load() < budgetStop && b.overdraft.Load() < overdraftHandlers || !b.over() {
		return !b.myTurn(c) // room, for the channels waiting first (turns)
	}
	return true
}

// sent counts n bytes of the peer's that were written (or dropped) and,
// once fewer than lowWater remain, lets stalled readers and parked
// requests go on.
func (c *Channel) sent(n int) {
	if c.w.addUnsent(-int64(n)) < c.resumeAt.Load() && c.stalled.Load() {
		c.unstall(false)
	}
}

// resumeBatch bounds the parked requests one unstall puts back in the
// worker pool's queue, which every channel of the server shares: putting
// back thousands at once (a consumer that reads nothing and asked for
// 10,000 answers) queued them ahead of other consumers' requests each time
// its answers drained. The rest follow as these end (runQueued) or the
// next answers drain; the channel's death puts back all of them.
const resumeBatch = 64

// unstall ends a stall episode, if fewer than lowWater bytes are unsent or
// force (the channel died): it wakes the stalled readers and puts parked
// requests back in the worker pool, resumeBatch of them (all with force:
// they find the channel dead and end). The episode goes on while requests
// stay parked.
func (c *Channel) unstall(force bool) {
	c.stallMu.Lock()
	if !c.stalled.Load() {
		c.stallMu.Unlock()
		return
	}
	if u := c.w.unsent.Load(); !force && (c.withMaking(u) >= c.resumeAt.Load() || c.budgetHolds()) {
		if b := c.w.budget; b != nil && len(c.parked) > 0 && c.budgetHolds() {
			b.wait(c) // woken when the budget has room
		}
		if !c.stallNoted && u >= budgetFree && c.stallCh != nil {
			// parked before the first answer; the answers have piled up
			c.noteStallLocked(u)
		}
		c.stallMu.Unlock()
		return
	}
	if c.stallCh != nil {
		close(c.stallCh)
		c.stallCh = nil
	}
	n := len(c.parked)
	if !force {
		n = min(n, resumeBatch)
		if b := c.w.budget; b != nil && b.over() && c.budgetEstimate() >= budgetFree {
			// one at a time while the Server's budget holds them: it
			// starts at most one for the channel (budgetHolds), and a
			// batch each would queue every waiting channel's requests in
			// the worker pool ahead of a new consumer's first call
			// (8 s for a canary call behind 24 such connections)
			n = min(n, 1)
		} else if b != nil && b.over() {
			// as many as the room under budgetFree takes (overFree), at
			// least one: resumeBatch each, the requests of 250
			// connections that read nothing went round the worker pool
			// and back to park every time a few of their answers were
			// written, and a new consumer's first call waited over a
			// second behind them (tester71 #1)
			room := (budgetFree - c.withMaking(c.w.unsent.Load())) / max(c.answerEstimate(), 1)
			n = min(n, int(max(room, 1)))
		} else {
			// as many as the room under highWater takes (overDispatch),
			// at least one: the others wait parked, in their place.
			// A batch each sent 30 requests for 4 MiB answers to race
			// for the two that had room, and the losers parked again
			// behind the winners: some were parked 30 times and waited
			// 4.5 s, the median 0.5 s (tester101)
			n = min(n, c.parkedRoom())
		}
	}
	resume := make([]task, n)
	copy(resume, c.parked)
	clear(c.parked[:n])
	if c.parked = c.parked[n:]; len(c.parked) == 0 {
		c.parked = nil
		c.stalled.Store(false)
		c.resumeAt.Store(lowWater)
	}
	c.nParked.Store(int64(len(c.parked)))
	c.stallMu.Unlock()
	// A parked request's wait for a worker starts now: the time it was
	// parked was its consumer's backpressure, not the pool's. Counted from
	// its arrival, a Payload call parked about 2 s (its consumer reading 64 MiB
	// of answers on a loaded machine) was refused SERVER_THREADPOOL_EXHAUSTED
	// as having "waited 2.073s for a worker", and at the queue's head it
	// had every newer request of every consumer refused at once.
	now := mono()
	for _, t := range resume {
		t.queued = now
		c.pool.submit(t)
	}
}

// startStallLocked marks the channel stalled and returns the channel
// closed when the episode ends, starting an episode if none runs, counted
// and logged at a bounded rate once the channel holds budgetFree unsent. The episode ends under lowWater when the
// channel's own highWater stopped it, under budgetFree when the Server's
// UnsentLimit did (resumeAt: the lower of the two once both did). On
// stallMu.
func (c *Channel) startStallLocked() chan struct{} {
	unsent := c.w.unsent.Load()
	resume := int64(lowWater)
	if c.withMaking(unsent) < highWater && c.w.budget != nil && c.w.budget.over() && (unsent >= budgetFree || c.answerSize.Load() > 0) {
		// stopped by the Server's budget (budgetHolds too). Not for a
		// channel that has answered nothing and holds under budgetFree:
		// its answers being made are the slow start's guess
		// (answerEstimate), which for 10 handlers fell under budgetFree
		// only after 700 ms, and the requests the budget parked behind
		// 10 long calls waited for that rather than for the budget's
		// room (its own slow start, budgetEstimate)
		resume = budgetFree
	}
	// Neither (the answers drained between the caller's look and here):
	// lowWater, and the caller finds the room it waits for. Without a
	// budget (unsent.limit=0) taking budgetFree here sent noteStallLocked
	// to the budget's log line and a nil budget: a provider's pool worker
	// panicked about once in 15 runs of
	// TestUnsentLimit_ManyNonReadingConsumers.
	if c.stallCh == nil || resume < c.resumeAt.Load() {
		c.resumeAt.Store(resume)
	}
	c.stalled.Store(true) // before the caller looks at unsent again: see sent
	if c.stallCh == nil {
		c.stallCh = make(chan struct{})
		c.stallNoted = false
	}
	// An episode is counted and logged once the channel holds budgetFree
	// or more unsent (here, or in unstall): requests parked before the
	// channel's first answer (firstAnswers) are no sign of a consumer that
	// does not read.
	if !c.stallNoted && unsent >= budgetFree {
		c.noteStallLocked(unsent)
	}
	return c.stallCh
}

// noteStallLocked counts the stall episode and logs it (rate-bounded),
// with unsent bytes unsent. On stallMu.
func (c *Channel) noteStallLocked(unsent int64) {
	c.stallNoted = true
	c.stalls.Add(1)
	counters.Channels.Stalls.Inc()
	if c.resumeAt.Load() == lowWater {
		making := c.withMaking(unsent) - unsent // answers being made, counted
		being := ""
		if making > 0 {
			being = fmt.Sprintf(" and %.1f MiB more being made (%d handlers running)", float64(making)/(1<<20), c.answering.Load())
		}
		c.logLimited(slog.LevelInfo, "stalled", fmt.Sprintf("stopped reading from %s: %.1f MiB of answers unread%s (the consumer or the path to it is slow; reading again under %s)",
			c.remote, float64(unsent)/(1<<20), being, protocol.FormatSize(lowWater)), "unsent_bytes", unsent, "making_bytes", making)
		return
	}
	counters.Channels.UnsentLimitStalls.Inc()
	b := c.w.budget
	c.logLimited(slog.LevelInfo, "stalled", fmt.Sprintf("stopped reading from %s: %.1f MiB of answers unread, and the provider's consumers together hold %.1f MiB unread and %.1f MiB being made, over unsent.limit %s (reading again under %s)",
		c.remote, float64(unsent)/(1<<20), float64(b.held.Load())/(1<<20), float64(b.making.Load())/(1<<20), protocol.FormatSize(b.limit), protocol.FormatSize(budgetFree)),
		"unsent_bytes", unsent, "server_unsent_bytes", b.held.Load(), "server_making_bytes", b.making.Load())
}

// waitRoom stops reader r until fewer than lowWater bytes are unsent for
// the peer. Responses held for r's read batch (Options.Direct) are
// released first, or nothing would drain. It reports false when the
// channel died meanwhile.
func (c *Channel) waitRoom(r *reader) bool {
	if r.held {
		c.w.hold(false)
		r.held = false
	}
	if !c.lockStallAlive() {
		return false
	}
	ch := c.startStallLocked()
	if c.withMaking(c.w.unsent.Load()) < c.resumeAt.Load() {
		// drained meanwhile: the sent that crossed lowWater may have
		// missed the stalled flag, so end the episode here
		c.stallMu.Unlock()
		c.unstall(false)
		return true
	}
	c.stallMu.Unlock()
	select {
	case <-ch:
		return true
	case <-c.sess.Done():
		// The connection failed or closed: reading again finds its end
		// after what is buffered (a blocked write may not notice it: a
		// smux stream waiting for its window does not).
		return true
	case <-c.dying:
		return false
	}
}

// park keeps t, a two-way request a worker was about to run, until the
// peer has room (unstall), and reports whether it did: not once the
// channel is dying, nor when the bytes fell under lowWater meanwhile.
func (c *Channel) park(t task) bool {
	if !c.lockStallAlive() {
		return false
	}
	c.startStallLocked()
	if b := c.w.budget; b != nil && c.budgetEstimate() >= budgetFree {
		b.wait(c) // before looking again: a handler that ends meanwhile wakes it
	}
	if c.withMaking(c.w.unsent.Load()) < c.resumeAt.Load() && !c.budgetHolds() {
		// drained meanwhile (see waitRoom): the caller runs it
		c.stallMu.Unlock()
		c.unstall(false)
		return false
	}
	c.parked = insertParked(c.parked, t)
	c.nParked.Store(int64(len(c.parked)))
	c.stallMu.Unlock()
	return true
}

// parkBehind parks t, a request for an answer not known small, behind
// the older requests parked on the channel, and reports whether it did
// (not once the channel is dying, nor when none older is parked any more).
// A request the reader hands over while older ones wait parked would
// otherwise start in the room they wait for, and the older ones park
// again behind it (tester101: with 32 callers of 4 MiB answers some
// calls waited 20 times as long as the median). It then puts back the
// head of the queue, if there is room for it (unstall).
func (c *Channel) parkBehind(t task) bool {
	if c.nParked.Load() == 0 || t.arrived == 0 {
		return false
	}
	if !c.lockStallAlive() {
		return false
	}
	if len(c.parked) == 0 || c.parked[0].arrived == 0 || c.parked[0].arrived > t.arrived {
		c.stallMu.Unlock()
		return false
	}
	c.startStallLocked()
	c.parked = insertParked(c.parked, t)
	c.nParked.Store(int64(len(c.parked)))
	c.stallMu.Unlock()
	c.unstall(false)
	return true
}

// lockStallAlive takes stallMu and reports true, unless the channel is
// dying: then it lets go of stallMu and reports false.
func (c *Channel) lockStallAlive() bool {
	c.stallMu.Lock()
	select {
	case <-c.dying:
		c.stallMu.Unlock()
		return false
	default:
		return true
	}
}

// insertParked inserts t into parked in the order the requests arrived
// (task.arrived; one with none goes last), so that a request put back
// that found no room parks again in its place, ahead of the requests
// read after it: unstall puts back the oldest first.
func insertParked(parked []task, t task) []task {
	i := len(parked)
	for t.arrived != 0 && i > 0 && parked[i-1].arrived > t.arrived {
		i--
	}
	return slices.Insert(parked, i, t)
}

// parkedRoom returns how many of the channel's parked requests have room
// to start under highWater (withMaking, overDispatch), at least one.
func (c *Channel) parkedRoom() int {
	est := max(c.answerEstimate(), 1)
	room := (highWater - c.withMaking(c.w.unsent.Load())) / est
	if c.answering.Load() == 0 {
		room++ // the first handler running is not counted (withMaking)
	}
	return int(min(max(room, 1), resumeBatch))
}

// runQueued runs t, a request a worker took from the pool, unless the
// peer has highWater bytes unsent, or unsent and being made
// (overDispatch), or the Server's budget has no room for its answer
// (takeBudget): then t waits, parked, for room. A request whose answer is
// known small (smallAnswer) waits only for overSmall.
func (c *Channel) runQueued(t task) {
	twoWay := t.h.TwoWay()
	if twoWay && c.answerSize.Load() == 0 {
		c.firstRequest()
	}
	small := twoWay && c.smallAnswer(&t)
	var cost int64
	var slot bool
	for twoWay {
		if small {
			if !c.overSmall() {
				break
			}
		} else if c.parkBehind(t) {
			return
		} else if !c.overDispatch() {
			var ok bool
			if cost, slot, ok = c.takeBudget(); ok {
				break
			}
		}
		if c.park(t) {
			return
		}
		select {
		case <-c.dying:
			twoWay = false // run drops it, counting nothing
		default: // room meanwhile (park): look again
		}
	}
	if c.queuedIn.Add(-queuedSize(t)) < lowWater && c.inStalled.Load() {
		c.wakeQueued(false)
	}
	if t.h.TwoWay() && !small {
		c.runAnswering(t, cost, slot)
	} else {
		c.run(t) // small: not counted in answering (smallAnswer)
	}
	if c.nParked.Load() > 0 || c.stalled.Load() {
		// the next parked ones, if there is room (resumeBatch), and a
		// stalled reader, now that this answer is no longer being made;
		// parked requests hold the channel alive, so its pool is still
		// open
		c.unstall(false)
	}
}

// takeBudget counts a handler about to start for the channel in the
// Server's making, at makingCost times budgetEstimate, and reports
// whether it may start: at once while the answers unsent and being made
// are under unsent.limit, else within the overdraft (slot). A channel
// whose answers are small (under budgetFree), or a Server without a
// budget, counts nothing (cost 0). Checking the sum and counting the
// handler is one step (compare-and-swap), so handlers starting together
// do not all pass under the limit.
func (c *Channel) takeBudget() (cost int64, slot, ok bool) {
	b := c.w.budget
	if b == nil {
		return 0, false, true
	}
	e := c.budgetEstimate()
	if e < budgetFree {
		return 0, false, true
	}
	if !b.myTurn(c) {
		return 0, false, false // others wait for room first (turns)
	}
	e *= makingCost
	defer func() {
		if ok {
			b.leaveTurn(c)
			if b.nWaiting.Load() > 0 && (b.overdraft.Load() < overdraftHandlers || !b.over()) {
				go b.wake() // room left: the next in turn need not wait for budgetPoll
			}
		}
	}()
	for {
		if m := b.making.Load(); b.held.Load()+m < b.limit {
			if b.making.CompareAndSwap(m, m+e) {
				counters.Channels.UnsentMaking.Add(e)
				return e, false, true
			}
			continue
		}
		n := b.overdraft.Load()
		if n >= overdraftHandlers {
			return 0, false, false
		}
		if b.overdraft.CompareAndSwap(n, n+1) {
			b.making.Add(e)
			counters.Channels.UnsentMaking.Add(e)
			return e, true, true
		}
	}
}

// runAnswering runs t, a two-way request, counted in answering until its
// answer is counted in unsent (or it ends without one), and in the
// Server's making at cost (takeBudget; slot: in its overdraft) until it
// ends, at most unknownRelease when its answer's size is not known.
func (c *Channel) runAnswering(t task, cost int64, slot bool) {
	c.answering.Add(1)
	defer c.answering.Add(-1)
	if b := c.w.budget; b != nil && cost > 0 {
		var done atomic.Bool
		release := func() {
			if done.CompareAndSwap(false, true) {
				b.making.Add(-cost)
				counters.Channels.UnsentMaking.Add(-cost)
				if slot {
					b.overdraft.Add(-1)
				}
				b.wake()
				c.unstall(false)
			}
		}
		defer release()
		if c.answerSize.Load() == 0 {
			var check func()
			check = func() {
				switch {
				case done.Load():
				case b.largeRecently():
					time.AfterFunc(unknownWait, check) // large answers are being made: keep counting
				default:
					release()
				}
			}
			timer := time.AfterFunc(unknownWait, check)
			defer timer.Stop()
		}
	}
	c.run(t)
}

// Requests read ahead (the inbound side). A reader hands requests to the
// worker pool as fast as they arrive; while their handlers lag (or are
// parked above), their bodies pile up in the pool's queue: 46 MiB of
// 32 KiB Echo requests from a consumer that read nothing, before its
// answers reached highWater. So a reader that has handed the pool
// highWater bytes of requests that have not started yet waits, before
// reading on, until they are under lowWater — as HTTP/2's connection
// flow-control window bounds what a server buffers for handlers that have
// not read it (gRPC-Go counts data consumed when the handler reads it).
// Parked requests count too; they start when the answers drain, which
// does not depend on this wait. It costs the reader one atomic add per
// request handed to the pool, nothing per frame.

// queuedSize is what t counts in Channel.queuedIn: its body and header.
func queuedSize(t task) int64 { return int64(len(t.body)) + protocol.HeaderLen }

// submit hands t to the worker pool and, when the requests handed over
// and not started reach highWater bytes, waits until they are under
// lowWater (or the channel dies, or its session is done).
func (r *reader) submit(t task) {
	c := r.c
	n := c.queuedIn.Add(queuedSize(t))
	c.pool.submit(t)
	if n < highWater {
		return
	}
	if r.held {
		c.w.hold(false)
		r.held = false
	}
	c.stallMu.Lock()
	select {
	case <-c.dying:
		c.stallMu.Unlock()
		return
	default:
	}
	c.inStalled.Store(true) // before looking at queuedIn again: see runQueued
	if c.inCh == nil {
		c.inCh = make(chan struct{})
	}
	ch := c.inCh
	if c.queuedIn.Load() < lowWater {
		c.stallMu.Unlock()
		c.wakeQueued(false)
		return
	}
	c.stallMu.Unlock()
	select {
	case <-ch:
	case <-c.sess.Done():
	case <-c.dying:
	}
}

// wakeQueued wakes the readers waiting in submit once fewer than lowWater
// bytes of requests wait for a worker, or at once with force (the channel
// died).
func (c *Channel) wakeQueued(force bool) {
	c.stallMu.Lock()
	if c.inStalled.Load() && (force || c.queuedIn.Load() < lowWater) {
		c.inStalled.Store(false)
		if c.inCh != nil {
			close(c.inCh)
			c.inCh = nil
		}
	}
	c.stallMu.Unlock()
}

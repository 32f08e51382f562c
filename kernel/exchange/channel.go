package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// ChannelStats is a snapshot of a channel's counters.
type ChannelStats struct {
	Pending        int   // calls waiting for a response (pings included)
	LateResponses  int64 // responses that arrived after their call had timed out or been cancelled; dropped
	InFlight       int   // provider: requests being served on this channel
	FramesRead     int64 // frames read, all streams
	FramesWritten  int64 // frames written, all streams
	Writes         int64 // writes on the transport; FramesWritten/Writes is the coalescing factor
	OwnStreams     int64 // frames sent on a stream of their own (body over 64 KiB, multiplexed sessions)
	Rejected       int64 // provider: requests answered SERVER_THREADPOOL_EXHAUSTED by the connection limit (Options.MaxConcurrent)
	Expired        int64 // provider: requests answered SERVER_TIMEOUT without their result: the consumer's deadline passed before a worker ran them, while they ran (in a filter plugin or the method), or before they finished
	OpenStreams    int   // provider, multiplexed: streams opened by the consumer and not yet finished
	RefusedStreams int64 // provider, multiplexed: streams closed unread because OpenStreams was at its cap
	HandOffs       int64 // provider, Options.Adaptive: requests that ran on the reader past handOffAfter, so a new reader took over
	Cancels        int64 // cancel events (cancel.go) sent (consumer) or read (provider)
	CancelDropped  int64 // provider: requests cancelled by their consumer before they ran: dropped, never run or answered
	Stalls         int64 // provider: times its readers stopped because highWater bytes of answers were unsent (backpressure.go)
	Unsent         int64 // bytes queued or being written for the peer now (backpressure.go)
	Unsolicited    int64 // responses whose id this side never sent (id 0, or above the highest sent); dropped, and counted in LateResponses too
}

// Channel is one live session with frames on it (implements spi.Channel).
// The dialing end (Side spi.Consumer) invokes; the accepting end (spi.Provider)
// serves requests with Options.Handler. Both ends answer heartbeat events.
type Channel struct {
	sess spi.Session
	opts Options
	// logp is the channel's logger (log): component, side and peer; on a
	// provider, consumer_application too once the consumer's hello named
	// it (learnApplication), swapped once
	logp    atomic.Pointer[slog.Logger]
	payload int64
	remote  string
	local   string // this end's address, "host:port" ("" when the session has none)

	nextID  atomic.Uint64
	pending pendingTable
	w       *writer
	codecs  [protocol.CodecMask + 1]atomic.Pointer[spi.Codec] // resolved codec ids

	lastRead, lastWrite atomic.Int64 // unix nanoseconds; lastRead also moves as a body over readProgressFrom arrives (read.go)
	late                atomic.Int64
	framesRead          atomic.Int64
	framesWritten       atomic.Int64
	writes              atomic.Int64
	ownStreams          atomic.Int64
	inflight            atomic.Int64  // provider: requests read and not yet answered
	calls               atomic.Int64  // consumer: Invoke calls in progress
	serverInflight      *atomic.Int64 // the Server's counter, or nil
	rejected            atomic.Int64
	expired             atomic.Int64
	openStreams         atomic.Int64
	refusedStreams      atomic.Int64
	claimed             atomic.Int64 // bytes reserved for bodies being read on streams of their own (reserveClaim)
	maxConcurrent       int64        // provider: cap on inflight; 0 unlimited
	maxStreams          int64        // provider, multiplexed: cap on openStreams; 0 unlimited
	refusedLogged       atomic.Bool
	refusing            atomic.Int64 // refused streams waiting for their header (refuseStream)

	// Options.Adaptive (adaptive.go)
	inline     atomic.Int64 // mono() when the request running on the reader started; 0 when none runs there
	watched    atomic.Bool  // the pool's watchdog looks at inline
	readerDone atomic.Bool  // the primary reader ended: the watchdog lets go
	// the long-lived stream's reader is running; a write failed (writeFailed)
	primaryReading, writeBroken atomic.Bool
	poolUntil                   atomic.Int64 // mono() until which requests go to the worker pool, after a hand-off
	handOffs                    atomic.Int64
	// the last hand-off's mono() time and worker-pool window
	// (nextPoolWindow); on the watchdog's mu
	lastHandOff, poolWindow int64
	rd                      *reader // the primary stream's reader, passed on at a hand-off

	ctx    context.Context // parent of every handler context; cancelled on death, or by abandon (cause errShutdownAbandoned)
	cancel context.CancelCauseFunc

	goMu     sync.Mutex // orders goIO's Add before die's Wait
	goClosed bool
	dieOnce  sync.Once
	dying    chan struct{} // closed when the channel dies
	watch    ctxWatch      // long-lived contexts its calls wait on without a select
	reason   string        // why; written before dying is closed
	failed   atomic.Int64  // calls the close failed (dieCounted), for FailedCalls
	io       ioGroup       // readers, writer, acceptor: Close waits for them
	handlers handlerCount  // provider requests submitted and not finished (queued, running, or their response being sent)
	live     atomic.Int64  // 1 until die, plus io, handlers and newChannel's own hold: at 0 the channel finishes (release)
	pool     *workerPool   // the Server's, or the channel's own (ownPool)
	ownPool  bool
	hbStop   func()
	finished chan struct{}          // closed when every goroutine has exited and OnClose returned
	stuck    atomic.Pointer[string] // the extension call closing the channel waits on ("session Close", `heartbeat "x" stop`); nil: none
	closeErr atomic.Pointer[error]  // the session Close's error, if any
	// closed when the session's Close returned an error (closeFailedAt
	// then says when, and closedConn whether die closed the session's
	// net.Conn instead: closeFailedConn): closing gives up on the
	// channel's goroutines after closeGrace
	closeFailed   chan struct{}
	closeFailedAt time.Time
	closedConn    bool
	watching      atomic.Pointer[string] // `heartbeat "x" Watch` while Watch runs
	accepting     atomic.Bool            // the acceptor is in the session's Accept
	hbErr         atomic.Pointer[error]  // the heartbeat stop's recovered panic

	// heartbeat negotiation and the provider's ping-flood guard (hello.go)
	peerHello      atomic.Pointer[spi.URL]
	hello          string                 // consumer: the first ping's body, Options.Hello and Options.Application; provider: the answer to a ping with a hello, Options.Hello and Options.Started, and a Direct provider's answer to every ping (withDirect)
	peerStarted    atomic.Int64           // consumer: the provider's start its hello gave (PeerStarted); 0: none
	peerApp        atomic.Pointer[string] // provider: the consumer's application from its hello (learnApplication)
	helloSent      atomic.Bool            // consumer: the hello went out with a ping
	mismatchLogged atomic.Bool
	slowPingLogged atomic.Bool   // consumer: warned that the provider's ping-flood guard will close an idle channel
	readBatches    atomic.Uint64 // read batches begun: frames read together from one buffer fill share a number
	dataSeen       atomic.Bool   // provider: a request arrived since the last ping
	readOnly       atomic.Bool   // consumer: the provider is shutting down; provider: the read-only event was sent
	draining       atomic.Bool   // consumer: the provider unregistered and drains (draining.go)

	// Go-away (hello.go, sendGoAway): the provider runs no request read
	// after closing is set, and tells the consumer the highest id it read
	// before; the consumer keeps that id + 1 in goAway (0: none).
	lastRequestID atomic.Uint64 // provider: the highest request id dispatched
	closing       atomic.Bool   // provider: the go-away is sent, nothing more runs
	goAwayQueued  chan struct{} // provider: closed once the go-away frame is queued, after closing is set
	goAway        atomic.Uint64 // consumer: the first request id the provider never read; 0: no go-away
	guardMu       sync.Mutex
	guard         pingGuard

	// provider: CloseExpected is answering the running requests before
	// it closes (answerBeforeClose)
	closingFor atomic.Pointer[closingCause]

	// closereason.go: consumer, the provider's close-reason event; the
	// pings read from the peer
	peerReason atomic.Pointer[string]
	pingsRead  atomic.Int64

	// Cancel events (cancel.go).
	cancels       cancelState   // provider: the ids the consumer cancelled, the handlers waiting on Done
	cancelsSeen   atomic.Int64  // cancel events sent (consumer) or read (provider)
	lastCancel    atomic.Uint64 // consumer: the writer's batch holding the last cancel event queued (flushCancels)
	cancelDropped atomic.Int64  // provider: cancelled requests dropped before they ran

	check livenessCheck // consumer: the ping after silent call timeouts (liveness.go)

	// Write-side backpressure (backpressure.go): a stall episode runs
	// while stalled is set; stallCh is closed when it ends.
	stallMu     sync.Mutex
	stalled     atomic.Bool
	resumeAt    atomic.Int64  // unsent under which the stall episode ends: lowWater, or budgetFree (backpressure.go)
	stallCh     chan struct{} // on stallMu
	stallNoted  bool          // the episode of stallCh was counted and logged; on stallMu
	parked      []task        // two-way requests waiting for room; on stallMu
	nParked     atomic.Int64  // len(parked), for runQueued without the lock
	answering   atomic.Int64  // two-way requests running on workers, their answers not yet counted in unsent, but those known small (smallAnswer; backpressure.go)
	answerSize  atomic.Int64  // the channel's answers' size, a decaying maximum (noteAnswer); 0 before the first
	firstAt     atomic.Int64  // mono() at the first two-way request run by a worker (firstRequest); 0 before it
	budgetWait  atomic.Bool   // in the Server budget's waiting list (unsentBudget.wait)
	budgetTurn  atomic.Bool   // in the Server budget's turns (unsentBudget.queueTurn); written on its mu
	turnPrev    *Channel      // the channel before this one in the Server budget's turns; on its mu
	turnNext    *Channel      // the one after it; on its mu
	slowWatch   atomic.Bool   // the slow-consumer watch runs (watchSlow)
	slowMark    atomic.Int64  // w.wrote when the watch last saw progress (checkSlow)
	slowSince   atomic.Int64  // mono() then, or when the Server was last under its limit
	stalls      atomic.Int64
	unsolicited atomic.Int64
	// Requests the readers handed to the worker pool that have not
	// started: their bytes, and the readers waiting for them to fall
	// under lowWater (backpressure.go, reader.submit).
	queuedIn  atomic.Int64
	inStalled atomic.Bool
	inCh      chan struct{} // on stallMu

	limits     *ratelog.Limiter           // rate-bounded log lines (ratelog.go)
	firstFrame atomic.Pointer[time.Timer] // provider: closes the channel if no frame arrives in time (Options.FirstFrameTimeout); nil when off
}

// NewChannel wraps sess and starts its goroutines: a reader per stream, the
// writer of the long-lived stream (while frames are queued), a stream acceptor on multiplexed sessions
// and the provider side. Once the channel is dead and the last of them
// (and of its handlers) has ended, a short goroutine runs the heartbeat's
// stop and OnClose (release): no goroutine waits for them meanwhile. On
// the consumer it opens the long-lived
// stream at once; if that fails the channel is returned already dead (Done
// closed, every call failing with CHANNEL_INACTIVE).
func NewChannel(sess spi.Session, opts Options) *Channel {
	return newChannel(sess, opts, nil, nil, false)
}

// newChannel makes a channel; a Server passes its in-flight counter and its
// worker pool, NewChannel neither. With deferWatch (a Server's) it does
// not call the heartbeat's Watch: the caller must call startWatch, which
// does and ends the channel's making.
func newChannel(sess spi.Session, opts Options, serverInflight *atomic.Int64, pool *workerPool, deferWatch bool) *Channel {
	if opts.Side == "" {
		opts.Side = spi.Consumer
	}
	if opts.Payload <= 0 {
		opts.Payload = protocol.DefaultPayload
	}
	if opts.Payload > protocol.MaxPayload {
		opts.Payload = protocol.MaxPayload
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	remote, local := "", ""
	if a := sess.RemoteAddr(); a != nil {
		remote = a.String()
	}
	if a := sess.LocalAddr(); a != nil {
		local = a.String()
	}
	c := &Channel{
		sess:           sess,
		opts:           opts,
		payload:        opts.Payload,
		remote:         remote,
		local:          local,
		w:              newWriterBudget(opts.budget),
		pool:           pool,
		serverInflight: serverInflight,
		dying:          make(chan struct{}),
		goAwayQueued:   make(chan struct{}),
		finished:       make(chan struct{}),
		closeFailed:    make(chan struct{}),
		limits:         limitsFor(opts.Logger),
	}
	c.resumeAt.Store(lowWater)
	if opts.budget != nil && opts.SlowConsumerAfter >= 0 {
		if c.opts.SlowConsumerAfter == 0 {
			c.opts.SlowConsumerAfter = DefaultSlowConsumerAfter
		}
		c.w.watch = c.watchSlow
	}
	if opts.Side == spi.Provider && opts.MinPingInterval >= 0 {
		c.guard.minInterval = opts.MinPingInterval
		if c.guard.minInterval == 0 {
			c.guard.minInterval = DefaultMinPingInterval
		}
		c.guard.maxStrikes = opts.MaxPingStrikes
		if c.guard.maxStrikes <= 0 {
			c.guard.maxStrikes = DefaultMaxPingStrikes
		}
	}
	if opts.Side == spi.Provider && opts.MaxConcurrent >= 0 {
		if opts.MaxConcurrent == 0 {
			opts.MaxConcurrent = DefaultMaxConcurrent
			c.opts.MaxConcurrent = DefaultMaxConcurrent
		}
		c.maxConcurrent = int64(opts.MaxConcurrent)
		c.maxStreams = int64(max(opts.MaxConcurrent, MinStreamCap))
	}
	if c.pool == nil {
		c.pool, c.ownPool = newWorkerPool(opts.Workers), true
	}
	c.io.c, c.handlers.c = c, c
	c.live.Store(2)    // alive (die releases it) and being made (released below)
	peer := "consumer" // the peer is named by its role: provider="host:port" finds a provider's whole story
	if opts.Side == spi.Consumer {
		peer = "provider"
	}
	c.logp.Store(logger.With("component", "exchange", "side", string(opts.Side), peer, remote))
	c.hello = opts.Hello
	if opts.Side == spi.Consumer && opts.Application != "" {
		c.hello = withApplication(opts.Hello, opts.Application)
	}
	if opts.Side == spi.Provider && opts.Started > 0 {
		c.hello = withStarted(opts.Hello, opts.Started)
	}
	if opts.Side == spi.Provider && opts.Direct {
		c.hello = withDirect(c.hello) // the answer to every ping (read.go)
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	now := time.Now().UnixNano()
	c.lastRead.Store(now)
	c.lastWrite.Store(now)
	if d := opts.FirstFrameTimeout; opts.Side == spi.Provider && d >= 0 {
		if d == 0 {
			d = DefaultFirstFrameTimeout
		}
		c.firstFrame.Store(time.AfterFunc(d, func() { c.noFirstFrame(d) }))
	}

	if opts.Side == spi.Consumer {
		c.waiting("session Open")
		s, err := sess.Open()
		c.waiting("")
		if err != nil {
			// dead before its first call: its owner learns it from that
			// call (the kernel's first ping: "the provider closed the
			// connection during the first ping", logged by the kernel,
			// rate-bounded; a provider at its accepts limit does this), so
			// this line is at Debug, not a second Warn for one fault
			c.die(fmt.Sprintf("open stream: %v", err), levelOwnerLogs)
		} else {
			c.startStream(s, true)
		}
		if sess.Multiplexed() {
			c.io.Add(1)
			go c.acceptLoop()
		}
	} else {
		c.io.Add(1)
		go c.acceptLoop()
	}
	if opts.Heartbeat != nil && !deferWatch {
		c.hbStop = c.watchHeartbeat(opts.Heartbeat) // a panic closes the channel (hbguard.go)
	}
	c.watchQuiet()
	if deferWatch {
		return c // startWatch releases it
	}
	c.release() // made: the channel finishes once it is dead and its goroutines and handlers have ended
	return c
}

// startStream starts the reader of s and, for the long-lived stream, the
// writer.
func (c *Channel) startStream(s io.ReadWriteCloser, primary bool) {
	if primary {
		c.w.start(s, c)
	}
	c.io.Add(1)
	go c.readLoop(s, primary)
}

// acceptLoop takes streams the peer opens. On the provider the first one is
// the long-lived stream responses are written to; on a session that is not
// multiplexed it is the only one.
func (c *Channel) acceptLoop() {
	defer c.io.Done()
	primary := c.opts.Side == spi.Provider
	for {
		c.accepting.Store(true)
		s, err := c.sess.Accept()
		c.accepting.Store(false)
		if err != nil {
			if !primary {
				// The long-lived stream's reader ends the channel, once it
				// has read what the session had buffered: a provider's
				// last responses before it closed at shutdown would
				// otherwise be lost with the calls waiting for them.
				return
			}
			if peerProtocolError(err) {
				if what := c.foreignOpening(err); what != "" {
					// another transport's consumer (tcp's frames on a
					// smux listener): as smux's opening on tcp (readFailed)
					c.dieCounted((&foreignOpeningError{what: what, err: err}).Error(), levelMismatch, nil)
					return
				}
				// the peer broke the transport's protocol (smux's
				// garbage): as a bad frame on tcp
				c.dieCounted(err.Error(), slog.LevelWarn, &counters.Channels.ProtocolErrors)
				return
			}
			c.die(fmt.Sprintf("accept stream: %v", err), slog.LevelDebug)
			return
		}
		select {
		case <-c.dying:
			s.Close()
			return
		default:
		}
		if !primary && c.maxStreams > 0 {
			if c.openStreams.Add(1) > c.maxStreams {
				c.openStreams.Add(-1)
				c.refuseStream(s)
				continue
			}
		}
		c.startStream(s, primary)
		if primary && !c.sess.Multiplexed() {
			return
		}
		primary = false
	}
}

// refuseStream refuses a stream the consumer opened beyond the cap,
// logging the first refusal of the channel. Its request is answered
// SERVER_THREADPOOL_EXHAUSTED, not run, when the stream's frame header
// arrives within refuseReadWait (answerRefused); the rest of the stream
// is not read. Closed unanswered, as before, the consumer's call waited
// its whole timeout (tester58: connection.concurrency=1, `bench -c 200
// --req 100KiB`, about 120 calls SERVER_TIMEOUT after 10 s). At most
// maxRefusing refusals wait for their header at once; beyond that a
// stream is closed at once, unread.
func (c *Channel) refuseStream(s io.ReadWriteCloser) {
	c.refusedStreams.Add(1)
	if !c.refusedLogged.Swap(true) {
		c.log().Warn("consumer opened too many streams: refusing them", "max_streams", c.maxStreams)
	}
	d, ok := s.(interface{ SetReadDeadline(time.Time) error })
	if !ok || c.refusing.Add(1) > maxRefusing {
		if ok {
			c.refusing.Add(-1)
		}
		_ = s.Close()
		return
	}
	go func() {
		defer c.refusing.Add(-1)
		defer s.Close()
		if d.SetReadDeadline(time.Now().Add(refuseReadWait)) == nil {
			c.answerRefused(s)
		}
	}()
}

// refuseReadWait is how long a refused stream's frame header may take to
// arrive; maxRefusing bounds the refusals waiting for theirs at once.
const (
	refuseReadWait = time.Second
	maxRefusing    = MinStreamCap
)

// answerRefused reads the frame header of refused stream s and answers its
// request SERVER_THREADPOOL_EXHAUSTED, not run. Anything else (an event, a
// response, no header in time) goes unanswered.
func (c *Channel) answerRefused(s io.Reader) {
	var hb [protocol.HeaderLen]byte
	h, err := protocol.ReadHeader(s, &hb, c.payload)
	if err != nil && !errors.Is(err, protocol.ErrTooLarge) || !h.IsRequest() || h.IsEvent() {
		return
	}
	codec, err := c.codec(h.CodecID())
	if err != nil {
		return
	}
	c.answer(h, codec, &spi.Error{Status: spi.StatusServerThreadpoolExhausted, Message: fmt.Sprintf(
		"exchange: the consumer has more than %d streams open on this connection, the provider's cap (max(connection.concurrency, %d)); the stream of this %d-byte request was refused unread; not run",
		c.maxStreams, MinStreamCap, h.Length)})
}

// ioGroup counts the channel's I/O goroutines as a sync.WaitGroup does
// (Close waits for them), and on the channel's live count.
type ioGroup struct {
	c  *Channel
	wg sync.WaitGroup
}

// Add counts n more goroutines; the adder holds a count itself (or the
// channel is not dead yet: goIO's goMu), so live is never raised from 0.
func (g *ioGroup) Add(n int) {
	g.c.live.Add(int64(n))
	g.wg.Add(n)
}

// Done ends one goroutine's count.
func (g *ioGroup) Done() {
	g.wg.Done()
	g.c.release()
}

// Wait waits until every counted goroutine has called Done.
func (g *ioGroup) Wait() { g.wg.Wait() }

// handlerCount counts the provider requests submitted and not finished,
// on the channel's live count only: nobody waits for them in a goroutine
// (release).
type handlerCount struct{ c *Channel }

// Add counts n more requests (called by a reader, which holds a count).
func (h *handlerCount) Add(n int) { h.c.live.Add(int64(n)) }

// Done ends one request's count.
func (h *handlerCount) Done() { h.c.release() }

// release drops one count of live. The last one, once the channel is
// dead and every goroutine and handler it counted has ended, starts the
// short goroutine that finishes the channel (finish): no goroutine of
// the channel waits meanwhile, so a handler that ignores its cancelled
// context leaves only its own goroutine behind while it runs. finish
// runs apart because the last count may be a
// worker's (the pool's close waits for it) or die's caller's (a heartbeat
// watch, whose stop waits for it).
func (c *Channel) release() {
	if c.live.Add(-1) == 0 {
		go c.finishChannel()
	}
}

// finishChannel stops the channel's own pool and heartbeat watch, calls
// OnClose and marks the channel finished (Wait).
func (c *Channel) finishChannel() {
	c.settleBudget()
	if c.ownPool {
		c.pool.close()
	}
	if c.hbStop != nil {
		c.stopHeartbeat(c.hbStop) // a panic is logged (hbguard.go)
	}
	if c.opts.OnClose != nil {
		c.opts.OnClose(c, c.reason)
	}
	close(c.finished)
}

// die closes the channel once: it records the reason, cancels every handler
// context, closes the session (which unblocks readers and the writer) and
// fails every pending call with CHANNEL_INACTIVE. It never waits, so any
// goroutine may call it.
func (c *Channel) die(reason string, level slog.Level) { c.dieCounted(reason, level, nil) }

// levelOwnerLogs, given to die, logs the "channel closed" line at Debug
// even when calls failed: the channel's owner logs the close at Warn with
// its reason and FailedCalls (the kernel's "channel closed;
// reconnecting"), so that one close is one Warn line.
const levelOwnerLogs = slog.LevelDebug - 1

// levelMismatch, given to dieCounted, logs the "channel closed" line at
// Info, rate-bounded as the Warn lines of protocol errors are: a peer
// speaking another transport (Options.ForeignOpening), a mismatch of URL
// keys rather than a broken peer, may still connect again and again.
const levelMismatch = slog.LevelInfo + 1

// dieCounted is die, counting the close in closed (a counters.Channels
// reason class; nil: none) when this call is the one that closes the
// channel, so that a close is counted once, under its first reason.
func (c *Channel) dieCounted(reason string, level slog.Level, closed *counters.Counter) {
	c.dieOnce.Do(func() {
		if closed != nil {
			closed.Inc()
		}
		c.goMu.Lock()
		c.goClosed = true
		c.goMu.Unlock()
		running := c.inflight.Load() // provider: requests this close cancels (read before their handlers see it)
		if cc := c.closingFor.Load(); cc != nil {
			// CloseExpected answered the running requests and was closing
			// for its reason: a consumer that closed first on reading
			// those answers, or a write that then failed, changes nothing
			reason, level = cc.reason, max(level, slog.LevelInfo)
			running = max(running, cc.running)
		}
		c.reason = reason
		c.w.close() // first: no handler answers after learning of the death
		close(c.dying)
		if t := c.firstFrame.Load(); t != nil {
			t.Stop()
		}
		if t := c.check.quiet.Load(); t != nil {
			t.Stop()
		}
		c.unstall(true) // stalled readers and parked requests find it dead
		c.wakeQueued(true)
		c.cancel(nil)
		if c.ownPool {
			c.pool.stop() // idle workers go now; busy ones when their handlers return
		}
		c.setStuck("session Close")
		if err := c.sess.Close(); err != nil {
			c.closeErr.Store(&err)
			c.closedConn = closeNetConn(c.sess)
			c.closeFailedAt = time.Now()
			close(c.closeFailed)
		}
		c.setStuck("")
		calls := c.pending.closeAll()
		c.failed.Store(int64(len(calls)))
		err := spi.Errorf(spi.StatusChannelInactive, "exchange: channel to %s closed: %s", c.remote, reason)
		var unreadErr error
		unread := c.goAway.Load()
		for _, cl := range calls {
			cl.err = err
			if unread != 0 && cl.id >= unread {
				// The provider said it read nothing from this id on.
				if unreadErr == nil {
					unreadErr = spi.Errorf(spi.StatusChannelInactive, "exchange: channel to %s closed: %s (the provider closed it before reading the request: not run)", c.remote, reason)
				}
				cl.err, cl.unread = unreadErr, true
			}
			cl.done <- struct{}{}
		}
		attrs := []any{"reason", reason, "failed_calls", len(calls)}
		cancelled := int64(0)
		if c.opts.Side == spi.Provider {
			// requests being served, whose handlers' contexts were just
			// cancelled (airnode stats counts them CANCELLED)
			cancelled = running
			attrs = append(attrs, "cancelled_requests", cancelled)
		}
		limited := level >= slog.LevelWarn
		if level == levelMismatch {
			level, limited = slog.LevelInfo, true
		}
		if level == levelOwnerLogs {
			level = slog.LevelDebug
		} else if level < slog.LevelInfo && (len(calls) > 0 || cancelled > 0) {
			level = slog.LevelInfo // not an ordinary close: calls failed or were cancelled
		}
		switch {
		case c.opts.OwnerLogsClose:
			// the owner's record for this close has the reason and the
			// failed calls (Options.OwnerLogsClose)
		case limited:
			// a peer breaking the protocol (or speaking another
			// transport) on connection after connection must not flood
			// the log
			c.logLimited(level, reasonClass(reason), "channel closed", attrs...)
		default:
			c.log().Log(context.Background(), level, "channel closed", attrs...)
		}
		c.release() // dead: goClosed is set, so no goIO raises live again
	})
}

// writeFailGrace bounds how long a channel whose write failed waits for
// its reader to reach the end of the connection (writeFailed).
const writeFailGrace = 100 * time.Millisecond

// writeFailed ends the channel after a failed write. A peer that closed
// the connection fails a write as soon as that is noticed, which may be
// before the reader got to what the peer sent before closing — its last
// responses, its go-away: a running reader is given writeFailGrace to read
// them and end the channel itself ("closed by peer"), so that those calls
// complete, or fail as not run, rather than all as "may have run".
// A write the peer reset or closed (ECONNRESET, EPIPE: a consumer that
// read nothing went away, its stalled reader not seeing it) is logged at
// Info, as a reset read is; other write errors at Warn.
func (c *Channel) writeFailed(err error) {
	if c.writeBroken.Swap(true) {
		return // the first failed write decided
	}
	reason := fmt.Sprintf("write: %v", err)
	level := slog.LevelWarn
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		level = slog.LevelInfo
	}
	if !c.primaryReading.Load() || !c.goIO(func() {
		t := time.NewTimer(writeFailGrace)
		defer t.Stop()
		select {
		case <-c.dying:
		case <-t.C:
			c.die(reason, level)
		}
	}) {
		c.die(reason, level)
	}
}

// goIO runs f in an I/O goroutine the channel waits for; once the channel
// is dying it runs nothing and returns false.
func (c *Channel) goIO(f func()) bool {
	c.goMu.Lock()
	defer c.goMu.Unlock()
	if c.goClosed {
		return false
	}
	c.io.Add(1)
	go func() {
		defer c.io.Done()
		f()
	}()
	return true
}

// Close closes the channel with reason: every pending call fails with
// CHANNEL_INACTIVE at once, handler contexts are cancelled, and Close returns
// once the channel's reader, writer and acceptor goroutines have exited.
// Idempotent; safe to call from any goroutine, including a heartbeat watch
// or a handler. Use Wait to also wait for running handlers, the heartbeat's
// stop and OnClose. A consumer channel first writes a cancel event still
// queued, 100 ms at most (flushCancels), so that a call cancelled just
// before the close is cancelled on the provider by the consumer.
//
// The "channel closed" line is at Debug (at Info when calls failed or
// requests were cancelled by it), or at Warn when reason is a heartbeat
// strategy's verdict: it starts with "heartbeat " ("heartbeat idle: 3
// pings to ... failed in a row", "heartbeat dual: nothing read from ..."),
// as the bundled strategies word it: the peer is dead or silent, which an
// operator must see.
func (c *Channel) Close(reason string) {
	c.flushCancels()
	level := slog.LevelDebug
	if strings.HasPrefix(reason, "heartbeat ") {
		level = slog.LevelWarn
		c.tellPeerWhy(reason)
	}
	c.die(reason, level)
	select {
	case <-c.closeFailed:
		// The session may still be open, its streams' readers blocked:
		// wait for them closeGrace at most.
		done := make(chan struct{})
		go func() { c.io.Wait(); close(done) }()
		t := time.NewTimer(closeGrace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	default:
		c.io.Wait()
	}
}

// CloseExpected is Close for a heartbeat's close that the peer's own
// settings make expected (spi.ExpectedCloser): the "channel closed" line is
// at Info, not Warn.
//
// On a provider with requests running (an idle provider closing a
// heartbeat=none consumer's connection during a call longer than its
// heartbeat.timeout) it first tells the consumer why: the handlers'
// contexts are cancelled (cause *closingCause), and each request whose
// handler returns within abandonWait (200 ms) is answered — with its result, or
// when it fails CHANNEL_INACTIVE "the provider closed the connection
// while S.M was running: <reason>" (handle) — and those answers are
// flushed before the close. The consumer would otherwise see only
// "closed by peer". A handler that ignores its context for longer is
// not waited for.
func (c *Channel) CloseExpected(reason string) {
	if c.opts.Side == spi.Provider && c.inflight.Load() > 0 {
		c.answerBeforeClose(reason)
	}
	c.tellPeerWhy(reason)
	c.die(reason, slog.LevelInfo)
	c.Close(reason) // dead already: only its waits for the readers
}

// closingCause is the cause of the handler contexts of a provider channel
// that CloseExpected is closing with requests running: a request that
// then fails is answered CHANNEL_INACTIVE naming reason (handle). The
// close's "channel closed" line gives reason and running as the cancelled
// requests, whoever ends the connection.
type closingCause struct {
	reason  string
	running int64 // requests running when the close began
}

func (e *closingCause) Error() string {
	return "exchange: provider closing the connection: " + e.reason
}

// closingCauseOf returns ctx's cause when it is a closingCause, else nil.
func closingCauseOf(ctx context.Context) *closingCause {
	var cc *closingCause
	if errors.As(context.Cause(ctx), &cc) {
		return cc
	}
	return nil
}

// answerBeforeClose cancels the running requests' handlers with a
// closingCause, waits abandonWait at most for their answers to be queued,
// then goAwayFlush at most for what is queued to be written.
func (c *Channel) answerBeforeClose(reason string) {
	cc := &closingCause{reason: reason, running: c.inflight.Load()}
	c.closingFor.Store(cc)
	c.cancel(cc)
	end := time.Now().Add(abandonWait)
	for c.inflight.Load() > 0 && time.Now().Before(end) {
		select {
		case <-c.dying:
			return
		case <-time.After(time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), goAwayFlush)
	defer cancel()
	c.flush(ctx)
}

// CloseLogged is Close for an owner that logs the close itself, such as
// the kernel giving up on a new connection whose first ping got no
// answer (its "cannot reconnect" line, bounded to attempts 1, 2, 4, 8...):
// the "channel closed" line is at Debug even when calls (that ping)
// failed, so one failed attempt is not also an Info line of its own.
func (c *Channel) CloseLogged(reason string) {
	c.die(reason, levelOwnerLogs)
	c.Close(reason) // dead already: only its waits for the readers
}

// flush waits until every frame queued on the long-lived stream has been
// written, the channel died, or ctx ended.
func (c *Channel) flush(ctx context.Context) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !c.w.drained() {
		select {
		case <-tick.C:
		case <-c.dying:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Wait blocks until the channel is dead and every goroutine it started has
// exited: readers, writer, handlers (which must honour their context),
// the heartbeat watch's stop, and OnClose. Do not call it from a handler or
// from OnClose.
func (c *Channel) Wait() { <-c.finished }

// Done is closed when the channel dies, for whatever reason.
func (c *Channel) Done() <-chan struct{} { return c.dying }

// Reason returns why the channel died, or "" while it is alive.
func (c *Channel) Reason() string {
	select {
	case <-c.dying:
		return c.reason
	default:
		return ""
	}
}

// FailedCalls returns how many pending calls the channel's close failed
// with CHANNEL_INACTIVE (the "channel closed" line's failed_calls); 0
// while it is alive. Read it once Finished is closed.
func (c *Channel) FailedCalls() int { return int(c.failed.Load()) }

// Side returns spi.Consumer on the dialing end and spi.Provider on the
// accepting end.
func (c *Channel) Side() spi.Side { return c.opts.Side }

// RemoteAddr returns the peer's "host:port".
func (c *Channel) RemoteAddr() string { return c.remote }

// LocalAddr returns this end's address ("host:port"; "" when the session
// has none): on the consumer the address the provider sees as the
// request's Remote.
func (c *Channel) LocalAddr() string { return c.local }

// Established reports whether the channel's connection is up
// (spi.Established): on the consumer, whether a frame came from the
// provider (the first ping's answer comes first); true on the provider.
func (c *Channel) Established() bool {
	return c.opts.Side != spi.Consumer || c.framesRead.Load() > 0
}

// LastRead returns when something was last read from any stream: a
// whole frame, or bytes of a body over 64 KiB still arriving, after each
// read (the channel's creation time before the first). "Nothing read for
// X" is no byte read for X, so a large frame crossing a slow link is not
// silence.
func (c *Channel) LastRead() time.Time { return time.Unix(0, c.lastRead.Load()) }

// LastWrite returns when the last frame was written (the channel's creation
// time before the first). Coalesced frames share one timestamp.
func (c *Channel) LastWrite() time.Time { return time.Unix(0, c.lastWrite.Load()) }

// Pending returns the number of calls waiting for a response (Stats().Pending).
func (c *Channel) Pending() int { return c.pending.len() }

// Stats returns a snapshot of the channel's counters.
func (c *Channel) Stats() ChannelStats {
	return ChannelStats{
		Pending:        c.pending.len(),
		LateResponses:  c.late.Load(),
		InFlight:       int(c.inflight.Load()),
		FramesRead:     c.framesRead.Load(),
		FramesWritten:  c.framesWritten.Load(),
		Writes:         c.writes.Load(),
		OwnStreams:     c.ownStreams.Load(),
		Rejected:       c.rejected.Load(),
		Expired:        c.expired.Load(),
		OpenStreams:    int(c.openStreams.Load()),
		RefusedStreams: c.refusedStreams.Load(),
		HandOffs:       c.handOffs.Load(),
		Cancels:        c.cancelsSeen.Load(),
		CancelDropped:  c.cancelDropped.Load(),
		Stalls:         c.stalls.Load(),
		Unsent:         c.w.unsent.Load(),
		Unsolicited:    c.unsolicited.Load(),
	}
}

// codec resolves a codec id with Options.Codec, caching the answer.
func (c *Channel) codec(id uint8) (spi.Codec, error) {
	if p := c.codecs[id].Load(); p != nil {
		return *p, nil
	}
	if c.opts.Codec == nil {
		return nil, fmt.Errorf("no codec resolver for codec id %d", id)
	}
	cd, err := c.opts.Codec(id)
	if err != nil {
		return nil, err
	}
	if cd == nil || cd.ID() != id {
		return nil, fmt.Errorf("codec resolver returned a wrong codec for id %d", id)
	}
	c.codecs[id].Store(&cd)
	return cd, nil
}

// send writes one response frame: a large body on a multiplexed session goes
// on a stream of its own, synchronously; everything else joins the writer's
// next batch, waiting while more than maxQueued bytes are queued. The error
// is an own-stream write's.
func (c *Channel) send(frame []byte) error {
	if c.ownStream(frame) {
		return c.sendOwnStream(frame)
	}
	c.w.enqueueWait(frame)
	return nil
}

// ownStream reports whether frame goes on a stream of its own: a body over
// ownStreamThreshold on a multiplexed session.
func (c *Channel) ownStream(frame []byte) bool {
	return len(frame)-protocol.HeaderLen > ownStreamThreshold && c.sess.Multiplexed()
}

// sendOwnStream opens a stream, writes frame on it and closes it.
func (c *Channel) sendOwnStream(frame []byte) error {
	s, err := c.sess.Open()
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	// writeChunk at a time: progress for the slow-consumer watch
	return c.writeOnStream(s, frame, writeChunk)
}

// writeOnStream writes frame on s, a stream of its own, chunk bytes per
// Write, and closes s. The error names the frame's size and wraps the
// write's or close's.
func (c *Channel) writeOnStream(s io.ReadWriteCloser, frame []byte, chunk int) error {
	var err error
	c.noteWrite(1)
	c.ownStreams.Add(1)
	for p := frame; len(p) > 0 && err == nil; {
		n := min(len(p), chunk)
		if _, err = s.Write(p[:n]); err == nil {
			c.w.took(n, len(frame))
		}
		p = p[n:]
	}
	cerr := s.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %d-byte frame on its own stream: %w", len(frame), err)
	}
	return nil
}

// noFirstFrame closes a provider channel on which no complete frame
// arrived within d of its creation (Options.FirstFrameTimeout).
func (c *Channel) noFirstFrame(d time.Duration) {
	if c.framesRead.Load() == 0 {
		c.dieCounted(fmt.Sprintf("no complete frame within %v of connecting: a silent or stalled peer (Options.FirstFrameTimeout)", d), slog.LevelDebug,
			&counters.Channels.FirstFrameTimeouts)
	}
}

var (
	_ spi.Channel       = (*Channel)(nil)
	_ spi.PeerHeartbeat = (*Channel)(nil)
)

// noteWrite stamps and counts a write of frames frames. It is called before
// the write, so that whoever reads the answer to one of them already sees
// it.
func (c *Channel) noteWrite(frames int64) {
	c.lastWrite.Store(time.Now().UnixNano())
	c.framesWritten.Add(frames)
	c.writes.Add(1)
}

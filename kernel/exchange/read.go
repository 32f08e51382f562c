package exchange

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// readBufferSize is the read buffer of the long-lived stream on a session
// that is not multiplexed (one read syscall brings in a batch of frames);
// own-stream frames are large and read straight into their body.
const readBufferSize = 8 << 10

// muxReadBufferSize is the read buffer of the long-lived stream on a
// multiplexed session, whose streams are buffered by the session already:
// a smaller one costs a few more (cheap, in-memory) stream reads per batch
// and saves 6 KiB per connection.
const muxReadBufferSize = 2 << 10

// readLoop reads frames from s until it ends. The end of the long-lived
// stream, or any protocol error on any stream, kills the channel; the clean
// end of a one-frame stream just ends its reader. It owns one count of
// c.io, which a hand-off (Options.Adaptive) passes to the new reader.
func (c *Channel) readLoop(s io.ReadWriteCloser, primary bool) {
	if !primary && c.maxStreams > 0 {
		defer c.openStreams.Add(-1)
	}
	size := readBufferSize
	if c.sess.Multiplexed() {
		size = muxReadBufferSize
	}
	if !primary {
		size = protocol.HeaderLen * 16
	}
	r := &reader{c: c, s: s, br: bufio.NewReaderSize(s, size), primary: primary, backpressure: c.opts.Side == spi.Provider}
	if primary && c.opts.Side == spi.Provider {
		r.direct = c.opts.Direct || c.opts.Adaptive
		if r.adaptive = c.opts.Adaptive && !c.opts.Direct; r.adaptive {
			c.rd = r
		}
	}
	c.read(r)
}

// read runs r's loop and gives back its count of c.io, unless r was
// handed off to another goroutine meanwhile.
func (c *Channel) read(r *reader) {
	if r.primary {
		c.primaryReading.Store(true)
	}
	if r.loop() {
		if r.primary {
			c.primaryReading.Store(false)
		}
		if r.adaptive {
			c.readerDone.Store(true)
		}
		c.io.Done()
	}
}

// reader is the state of a stream's read loop, kept apart from the
// goroutine running it so that a hand-off (Options.Adaptive) can move it to
// a new goroutine.
type reader struct {
	c        *Channel
	s        io.ReadWriteCloser
	br       *bufio.Reader
	primary  bool
	direct   bool  // provider requests run on the reader, responses held per read batch (Direct, Adaptive)
	adaptive bool  // Options.Adaptive on the primary stream
	held     bool  // direct: the writer holds this batch's responses
	batch    int64 // adaptive: mono() when the current read batch started
	warm     bool  // adaptive: the previous batch started less than quietAfter before this one
	inBatch  bool  // the previous frame left bytes buffered: this one is of the same read batch
	heldN    int   // direct: frames dispatched since the hold began or its responses last went out
	// provider: read no frame while the peer has highWater bytes unsent
	// (backpressure.go)
	backpressure bool
	// mono() until which the frames read are one read batch for the
	// ping-flood guard, after the reader waited for room (0: none)
	backlogUntil int64
	hb           [protocol.HeaderLen]byte
}

// stallBacklogWindow is how long after a reader stopped by its unsent
// answers (waitRoom) reads again the frames it reads count as one read
// batch for the ping-flood guard: the pings a consumer sent while it was
// not read are a backlog, read within microseconds, that arrived over the
// whole stall. Over plain TCP they share a buffer fill, but over TLS every
// ping is a record of its own, read alone: judged one by one, the dozen
// pings a dual heartbeat at 1 s queued while a provider wrote 8 MiB of
// answers over a 4 Mbit/s link closed that busy connection as "too many
// pings". A flood goes on being judged once the
// window ends, and its backlog is bounded by the socket's receive buffer.
// 200 ms: at 50 ms a race-detector run on a loaded 2-core machine was
// descheduled long enough while reading such a backlog of 20 TLS pings
// that the rest were judged one by one and closed the connection
// (TestHB3_PingsQueuedWhileStalledOverTLSAreNotAFlood, once in CI).
const stallBacklogWindow = 200 * time.Millisecond

// loop reads and dispatches frames until the stream ends (true) or a
// request running on this goroutine was handed off (false: the loop goes
// on in another goroutine, and this one must not touch r again).
func (r *reader) loop() bool {
	c, br := r.c, r.br
	for {
		if r.backpressure && c.overHighWater() {
			waited := mono()
			if !c.waitRoom(r) {
				return true // died while stalled
			}
			if now := mono(); now-waited >= int64(time.Millisecond) {
				r.backlogUntil = now + int64(stallBacklogWindow)
			}
		}
		h, err := protocol.ReadHeader(br, &r.hb, c.payload)
		if err != nil && errors.Is(err, protocol.ErrTooLarge) {
			if ok, serr := c.skipOversize(br, h); ok {
				if r.held { // the responses of the batch this header ended, and its answer, go out now
					c.w.hold(false)
					r.held, r.heldN = false, 0
				}
				continue
			} else if serr != nil {
				err = serr
			}
		}
		if err != nil {
			if !r.primary && err == io.EOF {
				_ = r.s.Close()
				return true
			}
			if errors.Is(err, protocol.ErrBadMagic) && c.framesRead.Load() == 0 && c.opts.ForeignOpening != nil {
				if what := c.opts.ForeignOpening(r.hb[:]); what != "" {
					err = &foreignOpeningError{what: what, err: err}
				}
			}
			c.readFailed(err)
			return true
		}
		var body []byte
		if h.Length > 0 {
			var err error
			if body, err = c.readBody(br, int(h.Length), r.primary); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				c.readFailed(fmt.Errorf("protocol: %w: body of %d bytes: %w", protocol.ErrTruncated, h.Length, err))
				return true
			}
		}
		// lastRead is for heartbeats (seconds): refresh it when the buffer
		// runs dry (the last frame of a batch) and every 64 frames.
		more := br.Buffered() > 0
		if r.backlogUntil != 0 && mono() >= r.backlogUntil {
			r.backlogUntil = 0
		}
		if !r.inBatch && r.backlogUntil == 0 {
			c.readBatches.Add(1) // the ping-flood guard counts one strike per batch
		}
		r.inBatch = more
		n := c.framesRead.Add(1)
		if !more || n%64 == 0 {
			c.lastRead.Store(time.Now().UnixNano())
		}
		if n == 1 {
			if t := c.firstFrame.Load(); t != nil {
				t.Stop()
			}
		}
		if r.direct && !r.held {
			// The responses to the requests read together wait for the
			// last of them, then go out together, written by this reader.
			c.w.hold(true)
			r.held = true
			if r.adaptive {
				now := mono()
				r.warm = r.batch != 0 && now-r.batch < quietAfter
				r.batch = now
			}
		}
		if err := c.dispatch(r, h, body); err != nil {
			if err == errHandedOff {
				return false
			}
			closed := &counters.Channels.ProtocolErrors
			if errors.Is(err, errTooManyPings) {
				closed = &counters.Channels.TooManyPings
				c.tellPeerWhy(err.Error())
			}
			c.dieCounted(err.Error(), slog.LevelWarn, closed)
			return true
		}
		if r.held {
			r.heldN++
			switch {
			case !more:
				c.w.hold(false)
				r.held, r.heldN = false, 0
			case r.heldN >= earlyFlushAfter:
				c.w.flushHeld()
				r.heldN = 0
			}
		}
	}
}

// readProgressFrom is the body size above which the reader stamps
// lastRead as the body's bytes arrive, after each read, and not only once
// the frame is whole: a 4 MiB frame takes 3.4 s on a 10 Mbit/s link, and
// a consumer's liveness check (liveness.go) or a heartbeat that judged
// only whole frames took that busy link for a silent one and closed it
// (0 of 10 such calls ever arrived). Smaller bodies come in one
// or two reads: they keep the per-frame stamp, and no clock read of their
// own.
const readProgressFrom = 64 << 10

// earlyFlushAfter is how many requests of a read batch run on the reader
// (Options.Direct) before the responses held so far go out, without
// waiting for the end of the batch (writer.flushHeld); the rest of a batch
// goes out at its end. Holding every response of a batch to its end left
// the consumer idle while the reader ran the batch, then woke all its
// callers at once: at c=100 on one tcp connection the consumer had no
// goroutine running a quarter of the time, and the two cores of the
// machine were 1.55 busy. Sending every 16 responses, in 8 alternated
// pairs (airnode serve --transport tcp; airnode bench -n 200000 -c 100
// --server-pid): median 150k -> 185k calls/s, 10.5 -> 9.0 µs total CPU
// per call, faster in 8 of 8 pairs; 4, 8 and 32 did as well as 16 within
// the noise; c=1 and c=10,000 unchanged. Since then (raw system calls, the
// smux primary stream's direct writes) 32 does better: 5 alternated pairs
// each (bench/profprovider, airnode bench -c 100): tcp 119.6k -> 125.2k
// calls/s median (faster in 4 of 5), provider CPU 6.1 -> 5.6 µs a call,
// provider write(2) calls 0.07 -> 0.04 a call; smux 103k either way,
// provider CPU 7.2 -> 6.8 µs, writev calls 0.11 -> 0.09. A smux read
// batch is one frame of the consumer's, about 16 requests at c=100: 16
// split most of them into a write of 16 answers and one of the rest.
const earlyFlushAfter = 32

// readBody reads a body of n bytes from br. On the long-lived stream
// (primary) a body of up to readProgressFrom bytes is read into a pooled
// buffer of its size, as it always was. A larger one is read into a buffer
// that grows as its bytes arrive, doubling from growFrom up to n, stamping
// lastRead after each read: a frame header that claims a large body
// reserves no more than growFrom until the body's bytes come. Reading a
// claimed body at once let 100 connections of 33 bytes each (a 16-byte
// header claiming 8 MB under the payload limit, one byte of body) take
// 841 MB of heap, and one smux connection with 200 such streams 1.68 GB
// (tester49 finding 1). Memory now follows the bytes received: at most
// growFrom plus three times them while a buffer grows. The doubling
// copies a large body's bytes about once more. The error is
// io.ReadFull's.
//
// A stream of its own (not primary) reserves its first buffer against
// the channel's claimCap (reserveClaim), and once that is taken starts
// from minPooledBody: one smux connection with 16,384 streams each
// claiming 64 KiB and sending one byte reserved 1 GB of heap.
func (c *Channel) readBody(br *bufio.Reader, n int, primary bool) ([]byte, error) {
	first := min(n, growFrom)
	if !primary {
		first = c.reserveClaim(first)
		defer c.claimed.Add(-int64(first))
	} else if n <= readProgressFrom {
		body := getBody(n)
		_, err := io.ReadFull(br, body)
		return body, err
	}
	body := getBody(first)
	for off := 0; off < n; {
		if off == len(body) {
			grown := make([]byte, min(2*len(body), n))
			copy(grown, body)
			putBody(body)
			body = grown
		}
		m, err := br.Read(body[off:])
		if m > 0 {
			off += m
			if n > readProgressFrom {
				c.lastRead.Store(time.Now().UnixNano())
			}
		}
		if err != nil && off < n {
			if err == io.EOF && off > 0 {
				err = io.ErrUnexpectedEOF
			}
			return body[:off], err
		}
	}
	return body, nil
}

// claimCap bounds the bytes a channel's streams of their own reserve at
// once for bodies whose bytes have not all arrived (readBody): a
// multiplexed connection may have thousands of streams open
// (MinStreamCap, connection.concurrency), each with a frame header read.
// Beyond it a body's buffer starts at minPooledBody and grows as its
// bytes arrive. Legitimate streams of their own carry large bodies that
// arrive at once; 64 of them at a time still start at growFrom.
const claimCap = 64 * growFrom

// reserveClaim counts want bytes (a body's first buffer) in the
// channel's claimed bytes and returns the buffer size to start with:
// want if that stays within claimCap, else min(want, minPooledBody),
// which is counted instead. The caller takes the returned size back out
// of claimed once the body is read.
func (c *Channel) reserveClaim(want int) int {
	if c.claimed.Add(int64(want)) <= claimCap {
		return want
	}
	small := min(want, minPooledBody)
	c.claimed.Add(int64(small - want))
	return small
}

// growFrom is the first buffer of a body over readProgressFrom
// (readBody), taken from the body pools.
const growFrom = maxPooledFrame

// skipOversize handles a call's frame whose body is over this side's
// payload limit without closing the connection: the body is read and
// dropped as it arrives (bufio.Reader.Discard: no buffer of its size,
// whatever the header claims, up to the 4 GiB a header can), a provider
// answers the request BAD_REQUEST naming its limit (the method did not
// run), a consumer fails the call BAD_RESPONSE naming its own (the method
// ran), and the connection goes on, its other calls untouched: as Dubbo
// fails the one request (ExceedPayloadLimitException) and gRPC answers
// that RPC RESOURCE_EXHAUSTED "received message larger than max".
//
// There is no size beyond which the connection is closed instead: one
// was (max(4 × payload, 64 MiB)), and a 70 MiB argument sent to a
// provider at the default 8 MiB then closed the connection with a
// go-away, so that every new call of the other callers on it failed at
// once "draining to shut down" until the consumer redialled (tester101:
// 19 calls in 399 ms on smux, 4 in 103 ms on tcp). Skipping costs the
// reader the time the body's bytes take to arrive, which the peer could
// take with calls under the limit as well, and no memory; a header of
// garbage that has the magic is caught at the next header (bad magic).
// On smux a body of its own stream is skipped by that stream's reader,
// and the calls of the other streams go on meanwhile; over tcp the frames
// behind it wait for its bytes, as they would behind any large frame.
//
// It reports false, for the caller to close the connection, for events
// (an event is never that large), frames of the other direction and
// unknown codecs; err is a read error while skipping.
func (c *Channel) skipOversize(br *bufio.Reader, h protocol.Header) (bool, error) {
	if h.IsEvent() {
		return false, nil
	}
	provider := c.opts.Side == spi.Provider
	if h.IsRequest() != provider {
		return false, nil
	}
	var codec spi.Codec
	if provider {
		var err error
		if codec, err = c.codec(h.CodecID()); err != nil {
			return false, nil
		}
	}
	if err := c.discard(br, int64(h.Length)); err != nil {
		return false, fmt.Errorf("protocol: %w: skipping a body of %d bytes over the payload limit: %w", protocol.ErrTruncated, h.Length, err)
	}
	limit := protocol.FormatSize(c.payload)
	if !provider {
		if cl := c.pending.take(h.ID); cl != nil {
			cl.err = spi.Errorf(spi.StatusBadResponse, "exchange: response of %d bytes from %s exceeds this consumer's payload limit %s (URL key payload; the method ran)", h.Length, c.remote, limit)
			cl.answered = true
			cl.done <- struct{}{}
		}
		return true, nil
	}
	counters.Provider.BadRequest.Inc()
	c.answer(h, codec, &spi.Error{Status: spi.StatusBadRequest, Message: fmt.Sprintf("exchange: request of %d bytes exceeds the provider's payload limit %s (URL key payload; not run)", h.Length, limit)})
	return true, nil
}

// discard reads and drops n bytes from br, stamping lastRead after each
// readProgressFrom bytes, as readBody does.
func (c *Channel) discard(br *bufio.Reader, n int64) error {
	for n > 0 {
		m, err := br.Discard(int(min(n, readProgressFrom)))
		n -= int64(m)
		c.lastRead.Store(time.Now().UnixNano())
		if err != nil {
			return err
		}
	}
	return nil
}

// readFailed kills the channel after a read error, logging protocol
// violations as warnings (counted in counters.Channels.ProtocolErrors),
// other read errors (a reset) at Info, and an ordinary close by the peer
// ("closed by peer": one per short-lived consumer such as airnode call) at
// Debug, unless calls failed or requests were cancelled by it (die raises
// it to Info).
//
// A read cut short because this side's connection was closed under it
// (net.ErrClosed: the tcp transport closes its connection when a write
// fails, before the writer reports it), a read cut short by a reset, and
// any read error after a write failed are never the peer's protocol
// error, whatever frame the reader was in: a consumer that stopped reading
// and then closed made the provider log WARN "protocol: truncated frame:
// body of 22 bytes: ... use of closed network connection".
func (c *Channel) readFailed(err error) {
	select {
	case <-c.dying:
		return // we closed it ourselves
	default:
	}
	level := slog.LevelInfo
	reason := "read: " + err.Error()
	var closed *counters.Counter
	switch {
	case c.writeBroken.Load(), errors.Is(err, net.ErrClosed), errors.Is(err, io.ErrClosedPipe):
		// the kernel's first-ping diagnosis takes exactly "closed by
		// peer" as the provider's doing (kernel/conn.go)
		level = slog.LevelDebug
		reason = c.withPeerReason("closed by peer")
	case errors.Is(err, syscall.ECONNRESET):
		// the peer reset the connection, mid-frame or not: "read: ...", at
		// Info, as any other read error
		var op *net.OpError
		if errors.As(err, &op) {
			reason = "read: " + op.Error()
		}
		reason = c.withPeerReason(reason)
	case errors.As(err, new(*foreignOpeningError)):
		// another transport's consumer: a mismatch of URL keys, not a
		// broken peer; rate-bounded as the protocol errors (dieCounted)
		level = levelMismatch
		reason = err.Error()
	case errors.Is(err, protocol.ErrBadMagic), errors.Is(err, protocol.ErrTooLarge), errors.Is(err, protocol.ErrTruncated), peerProtocolError(err):
		level = slog.LevelWarn
		reason = err.Error()
		if errors.Is(err, protocol.ErrBadMagic) && c.framesRead.Load() == 0 {
			reason += firstBytesHint(c.opts.Side)
		}
		closed = &counters.Channels.ProtocolErrors
	case errors.Is(err, io.EOF):
		level = slog.LevelDebug
		reason = c.withPeerReason("closed by peer")
	}
	c.dieCounted(reason, level, closed)
}

// foreignOpeningError is a bad magic in a connection's first bytes that
// Options.ForeignOpening recognized as another transport's opening.
type foreignOpeningError struct {
	what string // ForeignOpening's description
	err  error  // the bad magic
}

func (e *foreignOpeningError) Error() string {
	if errors.Is(e.err, protocol.ErrBadMagic) {
		return fmt.Sprintf("transport mismatch: %s (first bytes: %v)", e.what, e.err)
	}
	return fmt.Sprintf("transport mismatch: %s (%v)", e.what, e.err) // the transport's error names the bytes
}

// foreignOpening asks Options.ForeignOpening about the first bytes of a
// connection whose transport failed on them (err's chain has a
// FirstBytes() []byte method returning them: the smux transport's
// *ProtocolError when its consumer did not open as smux's do) and returns
// its answer; "" when it does not recognize them or nothing gives them.
func (c *Channel) foreignOpening(err error) string {
	var fb interface{ FirstBytes() []byte }
	if c.opts.ForeignOpening == nil || !errors.As(err, &fb) {
		return ""
	}
	first := fb.FirstBytes()
	if len(first) == 0 {
		return ""
	}
	return c.opts.ForeignOpening(first)
}

func (e *foreignOpeningError) Unwrap() error { return e.err }

// firstBytesHint explains a bad magic in the first bytes a connection
// carried: the peer speaks something else on it, most often because the
// two sides' URL keys transport (tcp, smux: neither reads the other's
// frames) or tls differ.
func firstBytesHint(side spi.Side) string {
	peer := "consumer"
	if side == spi.Consumer {
		peer = "provider"
	}
	return fmt.Sprintf(" in the first bytes of the connection: the %s speaks another protocol; its URL keys transport and tls must match this side's", peer)
}

// peerProtocolError reports whether err is a transport's report that the
// peer broke the transport's own protocol: an error in its chain with a
// ProtocolError() bool method that returns true (the smux transport's
// *ProtocolError for frames smux cannot parse). Such a close is logged and
// counted as the exchange's own frame errors are (readFailed).
func peerProtocolError(err error) bool {
	var pe interface{ ProtocolError() bool }
	return errors.As(err, &pe) && pe.ProtocolError()
}

// dispatch handles one frame read by r. An error is a protocol violation
// that closes the connection, or errHandedOff.
func (c *Channel) dispatch(r *reader, h protocol.Header, body []byte) error {
	switch {
	case h.IsEvent() && h.IsRequest():
		defer putBody(body)
		return c.heartbeatRequest(h, body)
	case !h.IsRequest():
		cl := c.pending.take(h.ID)
		if cl == nil {
			c.late.Add(1)
			counters.Channels.LateAnswers.Inc()
			putBody(body)
			if h.ID == 0 || h.ID > c.nextID.Load() {
				c.answerNeverAsked(h.ID)
			}
			return nil
		}
		cl.status, cl.codecID, cl.body = h.Status, h.CodecID(), body
		cl.done <- struct{}{}
		return nil
	}
	if c.opts.Side == spi.Provider && !c.dataSeen.Load() {
		c.dataSeen.Store(true) // resets the ping-flood strikes
	}
	// Note the id before looking at closing; sendGoAway sets closing
	// before it reads the id: a request it does not count is not run.
	c.noteRequest(h.ID)
	codec, err := c.codec(h.CodecID())
	if err != nil {
		putBody(body)
		if strings.Contains(err.Error(), fmt.Sprintf("codec id %d", h.CodecID())) {
			// the resolver's error names the id: "unknown codec id 7"
			// once, not twice (tester34)
			return fmt.Errorf("request %d: %v", h.ID, err)
		}
		return fmt.Errorf("request %d: unknown codec id %d: %v", h.ID, h.CodecID(), err)
	}
	// Counted in flight before looking at closing: sendGoAway sets
	// closing before Shutdown's drain reads the count, so a request that
	// finds closing unset is one that drain waits for (counted after the
	// look, it could start running once the channel was being closed,
	// and its answer be lost although the go-away said it was read).
	n := c.inflight.Add(1)
	if c.serverInflight != nil {
		c.serverInflight.Add(1)
	}
	if c.closing.Load() {
		// After the go-away nothing runs. It is answered too: a request
		// with an id under the go-away's (written after a higher one)
		// would otherwise wait, as may-have-run, for the channel to close.
		// The answer is queued before the count drops, so Shutdown's
		// flush after its drain sends it.
		putBody(body)
		// Behind the go-away on the wire, so that the consumer has it
		// when this answer comes and fails the call as not run whatever
		// its id (Channel.complete): sendGoAway sets closing before it
		// queues the go-away.
		<-c.goAwayQueued
		c.answer(h, codec, NotRunAnswer())
		c.uncount()
		return nil
	}
	if c.maxConcurrent > 0 && n > c.maxConcurrent {
		c.uncount()
		putBody(body)
		c.reject(h, codec)
		return nil
	}
	c.handlers.Add(1)
	t := task{c: c, h: h, codec: codec, body: body}
	switch {
	case c.opts.Direct:
		r.runDirect(t)
	case r.adaptive:
		return r.runInline(t)
	default:
		t.arrived = mono()
		r.submit(t)
	}
	return nil
}

// NotRunAnswer returns the answer a provider gives a request it does not
// run because it sent its go-away: SERVICE_NOT_FOUND "exchange: the
// provider is closing this connection and did not run the request (after
// its go-away)". The exchange answers so a request it reads after the
// go-away; a Handler that is shutting down may return it, as its Result's
// Err, for a request read before the go-away that it did not start (one
// still queued for a worker when the provider abandoned its calls). A
// consumer that has the go-away fails the call with its not-run error
// (CHANNEL_INACTIVE, spi.ErrGoAway: Channel.complete), which failover
// may retry on another provider, also for a non-idempotent method. The
// answer must follow the go-away on the channel (a Handler's answer does:
// GoAway returns after queuing it); a new *spi.Error on each call.
func NotRunAnswer() *spi.Error {
	return &spi.Error{Status: spi.StatusServiceNotFound, Message: "exchange: the provider is closing this connection and did not run the request (after its go-away)"}
}

// answerNeverAsked counts and logs (Warn, rate-bounded) a response whose
// id this side never sent: 0, or above the highest it numbered. A late
// or duplicate answer (after CLIENT_TIMEOUT, a cancel) is normal and
// silent; this one means the peer's framing or id handling is broken.
func (c *Channel) answerNeverAsked(id uint64) {
	c.unsolicited.Add(1)
	counters.Channels.Unsolicited.Inc()
	peer := "provider"
	if c.opts.Side == spi.Provider {
		peer = "consumer"
	}
	c.logLimited(slog.LevelWarn, "unsolicited answer", fmt.Sprintf("answer for request id %d never sent: is the %s's framing broken?", id, peer),
		"request_id", id, "highest_sent", c.nextID.Load())
}

// uncount takes back dispatch's count of a request it does not run.
func (c *Channel) uncount() {
	c.inflight.Add(-1)
	if c.serverInflight != nil {
		c.serverInflight.Add(-1)
	}
}

// reject answers a request over the connection limit (Options.MaxConcurrent)
// with SERVER_THREADPOOL_EXHAUSTED at once, from the reader: the frame is
// small and joins the writer's queue without waiting for room.
func (c *Channel) reject(h protocol.Header, codec spi.Codec) {
	c.rejected.Add(1)
	c.answer(h, codec, &spi.Error{Status: spi.StatusServerThreadpoolExhausted, Message: fmt.Sprintf("exchange: connection limit %d concurrent requests reached", c.maxConcurrent)})
}

// answer answers request h, which the provider does not run, with err, from
// the reader: the frame is small and joins the writer's queue without
// waiting for room. Nothing for a one-way request.
func (c *Channel) answer(h protocol.Header, codec spi.Codec, err *spi.Error) {
	if !h.TwoWay() {
		return
	}
	f := getFrame()
	defer putFrame(f)
	if _, eerr := encodeResponse(f, codec, spi.Result{Err: err}); eerr != nil {
		return // a codec that cannot encode a string: nothing sensible to send
	}
	protocol.Header{Flags: codec.ID() & protocol.CodecMask, Status: err.Status, ID: h.ID, Length: uint32(len(f.b) - protocol.HeaderLen)}.Put(f.b)
	c.w.enqueue(f.b)
}

// heartbeatRequest handles an event request: the provider's one-way
// read-only, draining and go-away events, the consumer's one-way cancel event (empty
// body, the cancelled request's id), or a heartbeat, which it answers. A body is the peer's hello
// (Options.Hello), stored and answered with this side's. On the provider
// the ping-flood guard (Options.MinPingInterval) runs first.
func (c *Channel) heartbeatRequest(h protocol.Header, body []byte) error {
	if !h.TwoWay() {
		switch {
		case string(body) == readOnlyEvent:
			if c.opts.Side == spi.Consumer && !c.readOnly.Swap(true) {
				c.log().Info("provider is shutting down: channel read-only")
				c.readOnlyNow()
			}
		case string(body) == drainingEvent:
			// draining.go; a provider ignores it.
			if c.opts.Side == spi.Consumer && !c.draining.Swap(true) {
				c.log().Info("provider announced it is draining: it shuts down soon")
			}
		case len(body) == goAwayLen && body[0] == goAwayEvent:
			if c.opts.Side == spi.Consumer {
				c.takeGoAway(binary.BigEndian.Uint64(body[1:]) + 1)
			}
		case len(body) > 1 && body[0] == closeReasonEvent:
			c.takeCloseReason(body) // closereason.go
		case len(body) == 0:
			// The consumer's cancel event (cancel.go); providers that
			// predate it dropped it here unread.
			if c.opts.Side == spi.Provider {
				c.takeCancel(h.ID)
			}
		}
		// Any other one-way event is one this side does not know: a hello
		// comes only with a two-way heartbeat, so it is dropped unread.
		return nil
	}
	if len(body) > 0 {
		c.learnHello(body) // first: the guard compares with the advertised interval
	}
	if c.opts.Side == spi.Provider {
		if err := c.notePing(time.Now()); err != nil {
			return err
		}
	}
	counters.Heartbeat.PingsReceived.Inc()
	c.pingsRead.Add(1)
	answer := ""
	switch {
	case c.opts.Side == spi.Provider && c.opts.Direct:
		answer = c.hello // with dispatcher=direct, also to an empty ping (KeyHelloDispatcher)
	case len(body) > 0:
		answer = c.opts.Hello
		if c.opts.Side == spi.Provider {
			answer = c.hello // with Options.Started
		}
	}
	var fb [protocol.HeaderLen + 128]byte
	f := append(fb[:protocol.HeaderLen], answer...)
	protocol.Header{Flags: protocol.FlagEvent, Status: spi.StatusOK, ID: h.ID, Length: uint32(len(answer))}.Put(f)
	c.w.enqueue(f)
	return nil
}

package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Invoke sends inv encoded with codec and waits for its response, for at
// most timeout (≤ 0: only ctx bounds the call) or ctx's deadline, whichever
// is sooner. The request body is the preamble of kernel/protocol (service,
// method, the remaining deadline in ms, attachments, argument count), then
// the arguments in codec.
//
// Result.Value is decoded into inv.Reply when it is non-nil (Value is then
// inv.Reply), else into a generic any. Failures are *spi.Error:
// CLIENT_TIMEOUT (the request was still queued, or its own-stream write had
// not started: it is withdrawn and never sent, so retrying it elsewhere
// cannot run it twice; or encoding a request over 64 KiB used up the
// timeout, which counts from the call), SERVER_TIMEOUT (the request was handed to the
// transport, in full or in part, and may reach the provider; no answer in
// time), CHANNEL_INACTIVE (the channel died first),
// SERIALIZATION_ERROR (encoding failed or the body is over the payload
// limit: nothing was sent), BAD_RESPONSE (the response did not decode),
// CLIENT_ERROR (ctx cancelled: a request already handed to the transport is
// followed by a cancel event, which cancels the provider's handler context
// or drops the request unrun; cancel.go), or the status the provider
// answered.
// Safe for concurrent use; no goroutine is started per call.
func (c *Channel) Invoke(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout time.Duration) spi.Result {
	return c.InvokeFrom(ctx, codec, inv, timeout, spi.Mono())
}

// InvokeFrom is Invoke for a caller that has just read the clock: began is
// its spi.Mono reading, from which the call's timeout counts, sparing the
// exchange a read of its own (the kernel's remote invoker times every
// call).
func (c *Channel) InvokeFrom(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout, began time.Duration) spi.Result {
	remaining, err := c.admit(ctx, codec, inv, timeout)
	if err != nil {
		return spi.Result{Err: err}
	}
	id := c.nextID.Add(1)
	cl := getCall(c, id)
	cl.timeout = remaining
	c.calls.Add(1)
	res := c.invoke(ctx, cl, codec, inv, int64(began))
	c.calls.Add(-1)
	res.RequestID, res.Local = id, c.local // the accesslog pairs its line with the provider's
	if cl.armed && !cl.timer.Stop() && !cl.timedOut {
		// The timer fired and its callback may still be about to look
		// for this call's id: a reused call could be timed out by it.
		return res
	}
	putCall(cl)
	return res
}

// admit returns the time a call may take from now: the sooner of timeout
// (≤ 0: none) and ctx's deadline, 0 for no deadline; or the reason it
// fails before anything is encoded: a nil codec or a cancelled ctx
// (CLIENT_ERROR), ctx's deadline passed (CLIENT_TIMEOUT), a dead channel
// (CHANNEL_INACTIVE). Out of InvokeFrom, whose frame its errors would
// widen for the whole call.
func (c *Channel) admit(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout time.Duration) (time.Duration, error) {
	if codec == nil {
		return 0, spi.Errorf(spi.StatusClientError, "exchange: invoke %s.%s: nil codec", inv.Service, inv.Method)
	}
	remaining := max(timeout, 0) // 0: no deadline
	if d, ok := ctx.Deadline(); ok {
		if r := time.Until(d); timeout <= 0 || r < remaining {
			remaining = r
		}
		if remaining <= 0 {
			return 0, spi.Errorf(spi.StatusClientTimeout, "exchange: call %s.%s to %s: deadline passed before sending", inv.Service, inv.Method, c.remote)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, spi.Errorf(spi.StatusClientError, "exchange: call %s.%s to %s: %w", inv.Service, inv.Method, c.remote, err)
	}
	select {
	case <-c.dying: // do not encode for a dead channel
		return 0, spi.Errorf(spi.StatusChannelInactive, "exchange: channel to %s closed: %s", c.remote, c.reason)
	default:
	}
	return remaining, nil
}

// invoke is Invoke after the deadline is known and the call's timer set:
// send, then wait. The caller waits in this frame, at the bottom of its
// stack, so what only sending needs is in sendCall's frame, gone by then (see
// failover's Cluster.Invoke: every byte of a waiting caller's stack counts
// at c=10,000).
func (c *Channel) invoke(ctx context.Context, cl *call, codec spi.Codec, inv *spi.Invocation, start int64) spi.Result {
	st, cd, err := c.sendCall(ctx, cl, codec, inv, start)
	if err != nil {
		return spi.Result{Err: err}
	}

	// Whoever takes the call out of the pending table signals done once:
	// the reader (a response), die (CHANNEL_INACTIVE), the call's timer
	// (timedOut) or the watcher of its ctx (cancelled). Only a ctx that
	// can be cancelled and is not watched needs a select.
	switch {
	case cd == nil:
		<-cl.done
	case cl.watcher != nil:
		select {
		case <-cd: // done before the watcher's walk could see this call
			if c.pending.take(cl.id) != nil {
				return c.expire(ctx, inv, cl, st, start)
			}
		default:
		}
		<-cl.done
	default:
		if cl.id%sampleEvery == 0 {
			c.watch.consider(c, cd)
		}
		select {
		case <-cl.done:
		case <-cd:
			if c.pending.take(cl.id) != nil {
				return c.expire(ctx, inv, cl, st, start)
			}
			<-cl.done // a response, the channel's death, the timer or a watcher won the race
		}
	}
	if cl.timedOut || cl.cancelled {
		return c.expire(ctx, inv, cl, st, start)
	}
	if cl.err != nil && !cl.unread && !cl.answered && !st.withdraw() {
		return spi.Result{Err: requestSent(cl.err)}
	}
	return c.complete(cl, codec, inv)
}

// sendCall encodes inv into a request frame, puts cl in the pending table and
// hands the frame to the writer (or a stream of its own). It returns where
// the frame went and ctx's Done channel (nil when ctx cannot end), or the
// call's failure, with nothing sent: SERIALIZATION_ERROR, CLIENT_TIMEOUT
// (encoding used up the timeout), CHANNEL_INACTIVE, or the provider's
// go-away (notRunError).
func (c *Channel) sendCall(ctx context.Context, cl *call, codec spi.Codec, inv *spi.Invocation, start int64) (sent, <-chan struct{}, error) {
	if len(inv.Attachments) > protocol.MaxAttachments {
		return sent{}, nil, tooManyAttachments(inv)
	}
	f := getFrame()
	f.limit = protocol.HeaderLen + int(c.payload) // encoding stops there (frameBuf.over); payload is at most protocol.MaxPayload
	if err := encodeRequest(f, codec, inv, cl.timeout); err != nil || int64(len(f.b)-protocol.HeaderLen) > c.payload {
		err = c.encodeFailed(inv, len(f.b)-protocol.HeaderLen, err)
		putFrame(f)
		return sent{}, nil, err
	}
	protocol.Header{
		Flags:  protocol.FlagRequest | protocol.FlagTwoWay | codec.ID()&protocol.CodecMask,
		ID:     cl.id,
		Length: uint32(len(f.b) - protocol.HeaderLen),
	}.Put(f.b)

	if cl.timeout > 0 && len(f.b) > encodeCounts {
		// Encoding a large body takes milliseconds (4 MiB: 5-50 ms): it
		// counts against the timeout, as the user's clock does.
		elapsed := time.Duration(mono() - start)
		if cl.timeout <= elapsed {
			err := c.encodeTimedOut(inv, elapsed, len(f.b))
			putFrame(f)
			return sent{}, nil, err
		}
		cl.timeout -= elapsed
	}
	cd := ctx.Done()
	if cd != nil {
		cl.watcher = c.watch.watching(cd)
	}
	if !c.addPending(cl) {
		putFrame(f)
		return sent{}, nil, c.closedError()
	}
	if c.goAway.Load() != 0 {
		// The provider's go-away came first: it would not run this one,
		// whatever its id (one under the go-away's, numbered before it
		// came, would be read after it, hence not run either).
		// Not sending it keeps it from arriving after the provider's
		// last read (Server.Shutdown's awaitGoAwayAck).
		putFrame(f)
		if c.pending.take(cl.id) == nil {
			<-cl.done // the go-away or the channel's death took it: not sent either
		}
		return sent{}, nil, c.notRunError()
	}
	if cl.timeout > 0 {
		// Set once the call can be taken: a timer firing earlier would
		// find nothing to time out.
		cl.arm()
	}
	return c.sendRequest(f), cd, nil
}

// tooManyAttachments is the SERIALIZATION_ERROR of a request with more
// attachments than the wire format carries (protocol.MaxAttachments).
func tooManyAttachments(inv *spi.Invocation) error {
	return spi.Errorf(spi.StatusSerializationError, "exchange: call %s.%s: request carries %d attachments, over the %d a provider accepts (a fixed limit of the wire format, docs/wire.md); not sent", inv.Service, inv.Method, len(inv.Attachments), protocol.MaxAttachments)
}

// encodeFailed is the SERIALIZATION_ERROR of inv's request: err, the
// encoding's failure, or when nil its body of n bytes over the consumer's
// payload limit; an err of the frame's limit (overLimit: encoding stopped
// as the body crossed it) says so in the same words.
func (c *Channel) encodeFailed(inv *spi.Invocation, n int, err error) error {
	var over *overLimit
	switch {
	case err == nil:
		err = fmt.Errorf("request body %d bytes exceeds this consumer's payload limit %s (URL key payload; not sent)", n, protocol.FormatSize(c.payload))
	case errors.As(err, &over):
		err = fmt.Errorf("request body of at least %d bytes exceeds this consumer's payload limit %s (URL key payload; encoding stopped there, not sent)", over.body, protocol.FormatSize(c.payload))
	}
	return spi.Errorf(spi.StatusSerializationError, "exchange: call %s.%s: %v", inv.Service, inv.Method, err)
}

// encodeTimedOut is the CLIENT_TIMEOUT of a call whose frame of size
// bytes took elapsed, its whole timeout, to encode. Its Cause is
// spi.ErrEncodeTimedOut: encoding it again for another provider would
// time out again, so failover does not retry it.
func (c *Channel) encodeTimedOut(inv *spi.Invocation, elapsed time.Duration, size int) error {
	return &spi.Error{Status: spi.StatusClientTimeout, Cause: spi.ErrEncodeTimedOut,
		Message: fmt.Sprintf("exchange: call %s.%s to %s timed out after %v encoding its %s request (never sent)", inv.Service, inv.Method, c.remote, roundElapsed(elapsed), protocol.FormatSize(int64(size)))}
}

// closedError is the CHANNEL_INACTIVE of a call the dead channel did not
// take.
func (c *Channel) closedError() error {
	return spi.Errorf(spi.StatusChannelInactive, "exchange: channel to %s closed: %s", c.remote, c.Reason())
}

// requestSent returns the channel's CHANNEL_INACTIVE error err for a call
// whose request had been handed to the transport before the channel died:
// the provider may have run it (spi.ErrRequestSent), so a failover retry
// is not safe unless the method is idempotent. The clause it adds names
// the call, since err's message may end with another request's failure
// (a heartbeat ping's "no answer": tester90).
func requestSent(err error) error {
	e := &spi.Error{Status: spi.StatusOf(err), Message: err.Error(), Cause: spi.ErrRequestSent}
	var se *spi.Error
	if errors.As(err, &se) {
		e.Message = se.Message
	}
	e.Message += " (this call's request had been sent when the channel closed: the provider may have run it)"
	return e
}

// encodeCounts is the request frame size above which the time spent
// encoding it is taken off the call's timeout; below, encoding takes
// microseconds and reading the clock again would cost more than it tells.
const encodeCounts = 64 << 10

// Own-stream write states (ownWrite.state).
const (
	ownQueued    int32 = iota // the goroutine has not started writing
	ownOpening                // opening the stream: nothing of the frame handed to the transport
	ownWriting                // writing on the stream (see ownWrite.withdraw)
	ownWithdrawn              // the call gave up first: never written
)

// ownWrite is where a request frame written on a stream of its own is.
type ownWrite struct {
	mu     sync.Mutex
	state  int32              // ownQueued, ownOpening, ownWriting or ownWithdrawn; on mu
	stream io.ReadWriteCloser // the stream, from ownWriting on; on mu
	done   chan struct{}      // closed when the write finished
}

// begin moves a queued write to ownOpening and reports whether it may go
// on (false: withdrawn).
func (o *ownWrite) begin() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != ownQueued {
		return false
	}
	o.state = ownOpening
	return true
}

// opened notes the stream opened for the write and reports whether the
// write may go on (false: withdrawn while the stream was being opened;
// the caller closes s, nothing of the frame written).
func (o *ownWrite) opened(s io.ReadWriteCloser) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state == ownWithdrawn {
		return false
	}
	o.state, o.stream = ownWriting, s
	return true
}

// withdraw makes sure no byte of the frame is ever handed to the
// transport, and reports whether that was still possible: before the
// goroutine started, while it opens the stream, and while writing on a
// stream that has handed none of it to the connection yet
// (spi.Withdrawer: smux's credit and window hold a large request back
// while the provider reads nothing; its Write then fails with
// spi.ErrWithdrawn, and the goroutine closes the stream).
func (o *ownWrite) withdraw() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.state {
	case ownQueued, ownOpening, ownWithdrawn:
		o.state = ownWithdrawn
		return true
	}
	if w, ok := o.stream.(spi.Withdrawer); ok && w.Withdraw() {
		o.state = ownWithdrawn
		return true
	}
	return false
}

// sent tells where a request frame is: its slot in the writer, or its
// own-stream write.
type sent struct {
	w    *writer
	slot slot
	own  *ownWrite // a frame on a stream of its own; nil otherwise
}

// written reports whether the frame has been written in full.
func (s sent) written() bool {
	if s.own != nil {
		select {
		case <-s.own.done:
			return true
		default:
			return false
		}
	}
	return s.w.written(s.slot.gen)
}

// withdraw makes sure a frame that has not been handed to the transport is
// never sent, and reports whether that was still possible. Call it once,
// after the call's pending entry is gone.
func (s sent) withdraw() bool {
	if s.own != nil {
		return s.own.withdraw()
	}
	return s.w.withdraw(s.slot)
}

// sendRequest queues or writes the request frame; f belongs to it.
func (c *Channel) sendRequest(f *frameBuf) sent {
	if len(f.b)-protocol.HeaderLen > ownStreamThreshold && c.sess.Multiplexed() {
		// A large request is written on its own stream by a goroutine the
		// channel owns, so the caller still honours its timeout.
		own := &ownWrite{done: make(chan struct{})}
		if !c.goIO(func() { c.writeOwn(own, f) }) {
			putFrame(f) // dead channel: the call fails with CHANNEL_INACTIVE
		}
		return sent{own: own}
	}
	return sent{w: c.w, slot: c.w.enqueueFrame(f)}
}

// writeOwn writes request frame f on a stream of its own unless the call
// withdraws it first (ownWrite.withdraw): then the stream, if opened, is
// closed with nothing of f on it, which the provider reads as an empty
// stream and drops. Any other failure kills the channel.
func (c *Channel) writeOwn(o *ownWrite, f *frameBuf) {
	defer putFrame(f)
	if !o.begin() {
		return // the call timed out first
	}
	s, err := c.sess.Open()
	if err != nil {
		c.die(fmt.Sprintf("open stream: %v", err), slog.LevelWarn) // as sendOwnStream's
		return
	}
	if !o.opened(s) {
		_ = s.Close()
		return
	}
	// in one Write: the transport's flow control then lets the whole
	// frame go or holds all of it back (withdrawable), where 64 KiB
	// chunks of many requests at once each took a share of smux's
	// credit, and all of them had bytes out
	if err := c.writeOnStream(s, f.b, len(f.b)); err != nil {
		if errors.Is(err, spi.ErrWithdrawn) {
			return // closed, nothing of it sent
		}
		c.die(err.Error(), slog.LevelWarn)
		return
	}
	close(o.done)
}

// expire builds the failure of call id whose deadline passed or whose ctx
// was cancelled; the pending entry is already gone. A request frame that is
// still queued is withdrawn first, so it is never sent; one that was handed
// to the transport is followed, when ctx was cancelled (not its deadline,
// which the provider knows), by the cancel event (cancel.go), so that the
// provider cancels its handler's context or drops it unrun. A
// SERVER_TIMEOUT may start a liveness check of the channel
// (checkAfterTimeout); the call's deadline is cl.timeout from start (a
// mono reading).
func (c *Channel) expire(ctx context.Context, inv *spi.Invocation, cl *call, s sent, start int64) spi.Result {
	id, elapsed, timeout := cl.id, time.Duration(mono()-start), cl.timeout
	withdrawn := s.withdraw()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		e := spi.Errorf(spi.StatusClientError, "exchange: call %s.%s to %s: %w", inv.Service, inv.Method, c.remote, err)
		if !withdrawn {
			c.sendCancel(id)
			e.Cause = errors.Join(e.Cause, spi.ErrRequestSent) // the provider may have started it
		}
		return spi.Result{Err: e}
	}
	if !withdrawn {
		c.checkAfterTimeout(elapsed, timeout)
	}
	elapsed = roundElapsed(elapsed)
	switch {
	case withdrawn:
		return spi.Result{Err: spi.Errorf(spi.StatusClientTimeout, "exchange: call %s.%s to %s timed out after %v before the request was written (withdrawn, never sent)%s", inv.Service, inv.Method, c.remote, elapsed, stalledNote(elapsed, timeout, false))}
	case s.written():
		return spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s to %s timed out after %v waiting for the response%s", inv.Service, inv.Method, c.remote, elapsed, stalledNote(elapsed, timeout, true))}
	}
	return spi.Result{Err: spi.Errorf(spi.StatusServerTimeout, "exchange: call %s.%s to %s timed out after %v while its request was being written (it may still reach the provider)%s", inv.Service, inv.Method, c.remote, elapsed, stalledNote(elapsed, timeout, false))}
}

// roundElapsed rounds the elapsed time a timeout message shows: to the
// millisecond from 1ms on, to the microsecond below it, so that a deadline
// shorter than the round trip reads "timed out after 239µs", not "after 0s".
func roundElapsed(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// stalledNote explains a timeout noticed far past its deadline: when the
// call's timer fired later than the timeout itself and at least a second
// after it, this process was not running meanwhile (SIGSTOP, a paused VM,
// CPU starvation), so the provider is not to blame: it may have answered
// in time (sent: the request was written, so its response may have been
// ready). Else "".
func stalledNote(elapsed, timeout time.Duration, sent bool) string {
	late := elapsed - timeout
	if timeout <= 0 || late < time.Second || late < timeout {
		return ""
	}
	tail := ""
	if sent {
		tail = ", and the response may have been ready"
	}
	return fmt.Sprintf("; but its %v timer fired %v late: this process was not running for ~%v (stopped or starved)%s",
		timeout, late.Round(time.Millisecond), late.Round(time.Second), tail)
}

// complete turns a taken call into the result. A CHANNEL_INACTIVE in a
// response frame is the provider's answer, not this channel's death: the
// provider received the request, so the error has spi.ErrRequestSent as its
// Cause (failover retries it only for idempotent methods), whatever the
// provider's message says. A SERVICE_NOT_FOUND after the provider's
// go-away is the go-away's not-run error (notRunError); a SERVER_ERROR
// after it has spi.ErrProviderShutdown as its Cause.
func (c *Channel) complete(cl *call, codec spi.Codec, inv *spi.Invocation) spi.Result {
	if cl.err != nil {
		return spi.Result{Err: cl.err}
	}
	if cl.codecID != codec.ID()&protocol.CodecMask {
		return spi.Result{Err: otherCodec(cl.codecID, codec)}
	}
	att, rest, err := protocol.ParseAttachments(cl.body)
	if err != nil {
		return spi.Result{Err: badAttachments(inv, err)}
	}
	res := spi.Result{Attachments: att}
	if cl.status == spi.StatusServiceNotFound && c.goAway.Load() != 0 {
		// The provider read this request after its go-away and answered
		// it unrun (dispatch: SERVICE_NOT_FOUND, "after its go-away",
		// queued behind the go-away, so this channel has it by now).
		// The go-away did not fail the call here: its id was under the
		// last one the go-away names (the provider noted the id before
		// it looked at closing, or two callers' requests reached it out
		// of id order). Not run, however it was refused: the go-away's
		// own error, safe to retry on another provider (a CI run of
		// TestShut1SteadyConsumerDoesNotHoldTheDrainOpen/smux got the
		// provider's SERVICE_NOT_FOUND once in 248 calls).
		return spi.Result{Err: c.notRunError()}
	}
	if cl.status != spi.StatusOK {
		return c.answeredError(cl, att, rest)
	}
	cl.rd.Reset(rest)
	dec := codec.NewDecoder(&cl.rd)
	defer spi.Release(dec)
	if inv.Reply != nil {
		if err := dec.Decode(inv.Reply); err != nil {
			return spi.Result{Err: badReply(codec, inv, err)}
		}
		res.Value = inv.Reply
		return res
	}
	// decoded into the pooled call, so that no variable escapes per call
	err = dec.Decode(&cl.value)
	res.Value, cl.value = cl.value, nil
	if err != nil {
		return spi.Result{Err: badReply(codec, inv, err)}
	}
	return res
}

// answeredError is complete's Result for a response whose status is not
// OK: the provider's message (rest, after the attachments att) as an
// *spi.Error of that status, see complete.
func (c *Channel) answeredError(cl *call, att map[string]string, rest []byte) spi.Result {
	msg, _, err := protocol.ParseString(rest)
	if err != nil {
		msg = []byte(fmt.Sprintf("(undecodable message: %v)", err))
	}
	e := &spi.Error{Status: cl.status, Message: string(msg)}
	if cl.status == spi.StatusChannelInactive {
		// Answered by the provider, so it did receive the request: a
		// connection behind it died during the call (a service
		// plugin's process), and the request may have run there.
		e.Cause = spi.ErrRequestSent
	}
	if cl.status == spi.StatusServerError && c.goAway.Load() != 0 {
		// Answered after the provider's go-away: it is shutting
		// down. A kernel provider abandoning its calls at its
		// shutdown timeout sends the go-away first, then their
		// SERVER_ERROR "... the call was abandoned" on the same
		// queue: asked again in this call it runs nothing
		// (spi.ErrProviderShutdown; failover's Repeats).
		e.Cause = spi.ErrProviderShutdown
	}
	// a provider's spi.BizError
	return spi.Result{Err: e, Attachments: withBizError(e, att)}
}

// otherCodec is the BAD_RESPONSE of a response in codec id, not the
// request's codec.
func otherCodec(id uint8, codec spi.Codec) error {
	return spi.Errorf(spi.StatusBadResponse, "exchange: response in codec id %d, request was %s (id %d)", id, codec.Name(), codec.ID())
}

// badAttachments is the BAD_RESPONSE of a response whose attachments did
// not parse.
func badAttachments(inv *spi.Invocation, err error) error {
	return spi.Errorf(spi.StatusBadResponse, "exchange: decode response of %s.%s: %v", inv.Service, inv.Method, err)
}

// badReply is the BAD_RESPONSE of a response body that codec could not
// decode into inv.Reply (or a generic value when inv.Reply is nil).
func badReply(codec spi.Codec, inv *spi.Invocation, err error) error {
	if inv.Reply != nil {
		return spi.Errorf(spi.StatusBadResponse, "exchange: decode %s.%s response into %T (codec %s): %v", inv.Service, inv.Method, inv.Reply, codec.Name(), err)
	}
	return spi.Errorf(spi.StatusBadResponse, "exchange: decode %s.%s response (codec %s): %v", inv.Service, inv.Method, codec.Name(), err)
}

// encodeRequest appends the request body to f: the preamble (protocol
// package: service, method, the remaining deadline in milliseconds rounded
// up, attachments, argument count), then the arguments in codec.
func encodeRequest(f *frameBuf, codec spi.Codec, inv *spi.Invocation, remaining time.Duration) error {
	var ms uint64
	if remaining > 0 {
		ms = uint64((remaining + time.Millisecond - 1) / time.Millisecond)
	}
	f.b = protocol.AppendRequestPreamble(f.b, inv.Service, inv.Method, ms, inv.Attachments, len(inv.Args))
	if len(inv.Args) == 0 {
		return nil
	}
	enc := codec.NewEncoder(f)
	defer spi.Release(enc)
	for i, a := range inv.Args {
		if err := enc.Encode(a); err != nil {
			return argumentFailed(i, a, err)
		}
	}
	return nil
}

// argumentFailed is encodeRequest's failure to encode argument i, a.
func argumentFailed(i int, a any, err error) error {
	return fmt.Errorf("argument %d (%T): %w", i, a, err)
}

// Ping sends a two-way heartbeat event and waits for the peer's answer, for
// ctx to end, or for the channel to die. A ping whose ctx ends while it is
// still queued is withdrawn (CLIENT_TIMEOUT); one already handed to the
// transport fails with SERVER_TIMEOUT. Safe for concurrent use.
//
// On a consumer whose Options.Hello or Options.Application is set, the
// first Ping carries the hello (see PingWith), once per connection.
func (c *Channel) Ping(ctx context.Context) error {
	if c.opts.Side == spi.Consumer && c.hello != "" && c.helloSent.CompareAndSwap(false, true) {
		return c.ping(ctx, c.hello)
	}
	return c.ping(ctx, "")
}

// PingWith is Ping with hello, a query string of heartbeat keys
// (HeartbeatHello), in the heartbeat's body: the peer stores it (its
// PeerHeartbeat) and, if it has a hello of its own, answers with it, which
// this channel stores in turn. Peers that predate hellos ignore the body.
func (c *Channel) PingWith(ctx context.Context, hello string) error {
	if hello != "" {
		c.helloSent.Store(true)
	}
	return c.ping(ctx, hello)
}

func (c *Channel) ping(ctx context.Context, hello string) error {
	cl := getCall(c, c.nextID.Add(1))
	if !c.addPending(cl) {
		putCall(cl)
		return spi.Errorf(spi.StatusChannelInactive, "exchange: ping %s: channel closed: %s", c.remote, c.Reason())
	}
	var hb [protocol.HeaderLen + 64]byte
	f := append(hb[:protocol.HeaderLen], hello...)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: cl.id, Length: uint32(len(hello))}.Put(f)
	sl := c.w.enqueue(f)
	defer putCall(cl)
	select {
	case <-cl.done:
	case <-ctx.Done():
		if c.pending.take(cl.id) != nil {
			st := spi.StatusServerTimeout
			if c.w.withdraw(sl) {
				st = spi.StatusClientTimeout // never sent
			}
			return spi.Errorf(st, "exchange: ping %s: no answer: %w", c.remote, ctx.Err())
		}
		<-cl.done
	}
	if cl.err != nil {
		return cl.err
	}
	if cl.status != spi.StatusOK {
		return spi.Errorf(cl.status, "exchange: ping %s answered %s", c.remote, cl.status)
	}
	if len(cl.body) > 0 { // the answer to a hello, or a Direct provider's to any ping (KeyHelloDispatcher)
		c.learnHello(cl.body)
	}
	return nil
}
